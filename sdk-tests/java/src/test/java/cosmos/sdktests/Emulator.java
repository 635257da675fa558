// One cosmos-emulator process started by the tests, as the Python and
// JavaScript suites do (sdk-tests/python/emulator.py, sdk-tests/js/emulator.mjs):
// `--port 0 --clock manual --clock-start 1700000000`, plus
// `--tls --cert-out <tmp>/cert.pem` for HTTPS, the endpoint read from the
// first stdout line (`listening on ...`), stopped with SIGTERM at the end.
// Its control routes (the test clock, the purge, splits) are signed with
// the account key like an account read (docs/src/clock.md).
package cosmos.sdktests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

public final class Emulator implements AutoCloseable {
    public static final String KEY =
        "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
    /** A fixed start keeps runs identical; far from the wall clock on purpose. */
    public static final long CLOCK_START = 1_700_000_000L;
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Processes are started from this one thread, which lives as long as the
     * JVM: with --parent-pid the emulator asks Linux for SIGTERM when the
     * thread that started it ends (emulator/src/binary/shutdown.rs), so not from a test's thread.
     */
    private static final ExecutorService SPAWNER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "emulator-spawner");
        t.setDaemon(true);
        return t;
    });

    public final boolean tls;
    public final String endpoint;
    public final Path certPath;
    private final Process process;
    private final Path stderr;
    private final HttpClient http;

    public static Path repo() {
        // sdk-tests/java is the working directory under Maven.
        return Paths.get("").toAbsolutePath().getParent().getParent();
    }

    public static String binary() {
        String bin = System.getenv("COSMOS_EMULATOR_BIN");
        if (bin != null && !bin.isEmpty()) {
            return bin;
        }
        return repo().resolve("target/debug/cosmos-emulator").toString();
    }

    /**
     * The certificate authority every HTTPS emulator of this JVM signs with
     * (--cert-dir, docs/src/tls.md): the trust store made from the first one's
     * certificate trusts every one started after it, the regional ones too.
     */
    private static Path suiteAuthority;

    private static synchronized Path suiteAuthority() throws IOException {
        if (suiteAuthority == null) {
            suiteAuthority = Files.createTempDirectory("cosmos-sdk-tests-java-ca-");
        }
        return suiteAuthority;
    }

    public static Emulator start(boolean tls, String... extra) throws Exception {
        Path dir = Files.createTempDirectory("cosmos-sdk-tests-java-");
        Path cert = tls ? dir.resolve("cert.pem") : null;
        List<String> args = new ArrayList<>(List.of(
            binary(), "--port", "0", "--clock", "manual", "--clock-start", Long.toString(CLOCK_START),
            "--parent-pid", Long.toString(ProcessHandle.current().pid())));
        if (tls) {
            args.addAll(List.of("--tls", "--cert-out", cert.toString(), "--cert-dir", suiteAuthority().toString()));
        }
        args.addAll(List.of(extra));
        Path stderr = dir.resolve("stderr.log");
        ProcessBuilder builder = new ProcessBuilder(args)
            .redirectError(stderr.toFile())
            .redirectInput(ProcessBuilder.Redirect.PIPE);
        Process process = CompletableFuture.supplyAsync(() -> {
            try {
                return builder.start();
            } catch (IOException e) {
                throw new IllegalStateException("cannot start " + binary() + " (build it: cargo build -p cosmos-emulator)", e);
            }
        }, SPAWNER).get(30, TimeUnit.SECONDS);
        String endpoint;
        try {
            endpoint = listeningLine(process, stderr);
        } catch (Exception e) {
            process.destroyForcibly();
            throw e;
        }
        Emulator emulator = new Emulator(tls, endpoint, cert, process, stderr);
        String scheme = tls ? "https://" : "http://";
        if (!endpoint.startsWith(scheme)) {
            emulator.close();
            throw new IllegalStateException("expected an " + scheme + " endpoint, the emulator printed " + endpoint);
        }
        return emulator;
    }

    private static String listeningLine(Process process, Path stderr) throws Exception {
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)).readLine();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        String first;
        try {
            first = line.get(STARTUP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("no 'listening on' line within " + STARTUP_TIMEOUT + tail(stderr));
        }
        if (first == null) {
            throw new IllegalStateException("the emulator exited before listening" + tail(stderr));
        }
        String prefix = "listening on ";
        if (!first.startsWith(prefix)) {
            throw new IllegalStateException("unexpected first stdout line " + first + tail(stderr));
        }
        String url = first.substring(prefix.length()).trim();
        return url.endsWith("/") ? url : url + "/";
    }

    private static String tail(Path stderr) {
        try {
            String text = Files.readString(stderr);
            return "\n--- emulator stderr ---\n" + text.substring(Math.max(0, text.length() - 2000));
        } catch (IOException e) {
            return "";
        }
    }

    private Emulator(boolean tls, String endpoint, Path certPath, Process process, Path stderr) throws Exception {
        this.tls = tls;
        this.endpoint = endpoint;
        this.certPath = certPath;
        this.process = process;
        this.stderr = stderr;
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10));
        if (tls) {
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trustStore());
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            builder.sslContext(context);
        }
        this.http = builder.build();
    }

    /** The emulator's certificate (PEM, from --cert-out). */
    public X509Certificate certificate() throws Exception {
        byte[] pem = Files.readAllBytes(certPath);
        return (X509Certificate) CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(pem));
    }

    /** A PKCS12 key store holding exactly the emulator's certificate. */
    public KeyStore trustStore() throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setCertificateEntry("cosmos-emulator", certificate());
        return store;
    }

    /**
     * An HTTPS emulator, stopped when the JVM exits, whose certificate
     * becomes the JVM's trust store (javax.net.ssl.trustStore, a PKCS12 store
     * holding exactly that certificate): call it before any client exists,
     * so that verification stays on and trusts that certificate alone.
     */
    public static Emulator startTrustedByTheJvm() {
        try {
            Emulator started = start(true);
            Runtime.getRuntime().addShutdownHook(new Thread(started::close));
            Path store = started.writeTrustStore("changeit");
            System.setProperty("javax.net.ssl.trustStore", store.toString());
            System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
            System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
            return started;
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the HTTPS emulator", e);
        }
    }

    /** Writes {@link #trustStore()} to a file, for javax.net.ssl.trustStore. */
    public Path writeTrustStore(String password) throws Exception {
        Path file = certPath.resolveSibling("truststore.p12");
        try (OutputStream out = Files.newOutputStream(file)) {
            trustStore().store(out, password.toCharArray());
        }
        return file;
    }

    // --- the control API ----------------------------------------------------

    /** The master-key authorization of docs/src/reference/protocol.md#authentication. */
    static Map<String, String> signed(String verb, String resourceType, String resourceLink) {
        try {
            String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(ZonedDateTime.now(ZoneOffset.UTC));
            String payload = verb.toLowerCase() + "\n" + resourceType.toLowerCase() + "\n" + resourceLink + "\n"
                + date.toLowerCase() + "\n\n";
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(Base64.getDecoder().decode(KEY), "HmacSHA256"));
            String sig = Base64.getEncoder().encodeToString(mac.doFinal(payload.getBytes(StandardCharsets.UTF_8)));
            return Map.of(
                "authorization", URLEncoder.encode("type=master&ver=1.0&sig=" + sig, StandardCharsets.UTF_8),
                "x-ms-date", date,
                "x-ms-version", "2020-07-15");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A signed request to a control route; its JSON answer, or an error naming the status. */
    public JsonNode control(String method, String route, Object body) throws Exception {
        return controlAt(endpoint, method, route, body);
    }

    /** {@link #control} sent to another of this emulator's endpoints (a region's, --regions). */
    public JsonNode controlAt(String base, String method, String route, Object body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + route))
            .timeout(Duration.ofSeconds(60));
        signed(method, "", "").forEach(request::header);
        if (body == null) {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            request.header("content-type", "application/json");
            request.method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        }
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException(method + " /" + route + ": " + response.statusCode() + " " + response.body());
        }
        return JSON.readTree(response.body());
    }

    /**
     * Creates a container without a partition key, as the v2 SDKs did (API
     * version 2018-06-18, no partitionKey in the body): what the Java SDK 4
     * cannot create but still reads and writes.
     */
    public void createContainerWithoutPartitionKey(String database, String id) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(endpoint + "dbs/" + database + "/colls"))
            .timeout(Duration.ofSeconds(60))
            .header("content-type", "application/json");
        signed("POST", "colls", "dbs/" + database).forEach((name, value) ->
            request.header(name, name.equals("x-ms-version") ? "2018-06-18" : value));
        request.POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("id", id))));
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 201) {
            throw new IllegalStateException("create " + id + ": " + response.statusCode() + " " + response.body());
        }
    }

    /** GET without signing: what any client may read (the explorer's certificate). */
    public HttpResponse<String> getUnsigned(String route) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(endpoint + route)).build(), HttpResponse.BodyHandlers.ofString());
    }

    public long now() throws Exception {
        return control("GET", "_emulator/clock", null).get("now").asLong();
    }

    /** Moves the test clock on by {@code seconds}; the new time. */
    public long advance(long seconds) throws Exception {
        return control("POST", "_emulator/clock", Map.of("advance", seconds)).get("now").asLong();
    }

    /** Returns once every item due now is purged (its TTL delete in the change feed); how many. */
    public int purge() throws Exception {
        return control("POST", "_emulator/purge", Map.of()).get("purged").asInt();
    }

    /** Splits a range in two; the children's ids. */
    public List<String> split(String database, String container, String range) throws Exception {
        JsonNode children = control("POST", "_emulator/split",
            Map.of("database", database, "container", container, "range", range)).get("PartitionKeyRanges");
        List<String> ids = new ArrayList<>();
        children.forEach(child -> ids.add(child.get("id").asText()));
        return ids;
    }

    /** Ends the process with SIGKILL, as a crash would: no shutdown of its own. */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy(); // SIGTERM
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    public String stderrTail() {
        return tail(stderr);
    }
}
