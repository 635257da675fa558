// The image started by Testcontainers for Java's Azure module
// (org.testcontainers:testcontainers-azure 2.0.5, CosmosDBEmulatorContainer),
// used as its documentation shows (java.testcontainers.org/modules/azure,
// "CosmosDB"), with one change: the image, from COSMOS_EMULATOR_IMAGE,
// declared a substitute for Microsoft's as Testcontainers asks of any
// other image.
//
// What the module does, read from its source: exposes 8081 (a random host
// port), waits for a log line matching `.*Started\r\n$`, and builds a
// PKCS12 trust store from https://host:port/_explorer/emulator.pem; its
// endpoint is always https. The clients are built as in production, without
// .gatewayMode(): the SDK's default, Direct mode, reaches the replicas on
// the same mapped port (the address feed names the host and port the client
// used), which the diagnostics show.
//
// Run by `cargo xtask image --test` through podman's Docker API
// (DOCKER_HOST), Ryuk off (TESTCONTAINERS_RYUK_DISABLED=true).
package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosDiagnostics;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosContainerResponse;
import com.azure.cosmos.models.CosmosDatabaseResponse;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosItemResponse;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.FileOutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.containers.CosmosDBEmulatorContainer;
import org.testcontainers.utility.DockerImageName;

class CosmosEmulatorContainerTest {

    // ANCHOR: image
    static final DockerImageName IMAGE = DockerImageName
        .parse(System.getenv().getOrDefault("COSMOS_EMULATOR_IMAGE", "ghcr.io/owner/cosmos-emulator"))
        .asCompatibleSubstituteFor("mcr.microsoft.com/cosmosdb/linux/azure-cosmos-emulator");
    // ANCHOR_END: image

    @TempDir
    Path tempFolder;

    @Test
    void theDocumentedUsage() throws Exception {
        try (CosmosDBEmulatorContainer emulator = new CosmosDBEmulatorContainer(IMAGE)) {
            emulator.start();
            // ANCHOR: usage
            Path keyStoreFile = tempFolder.resolve("azure-cosmos-emulator.keystore");
            KeyStore keyStore = emulator.buildNewKeyStore();
            keyStore.store(new FileOutputStream(keyStoreFile.toFile()), emulator.getEmulatorKey().toCharArray());

            System.setProperty("javax.net.ssl.trustStore", keyStoreFile.toString());
            System.setProperty("javax.net.ssl.trustStorePassword", emulator.getEmulatorKey());
            System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");

            CosmosClient client = new CosmosClientBuilder()
                .endpointDiscoveryEnabled(false)
                .endpoint(emulator.getEmulatorEndpoint())
                .key(emulator.getEmulatorKey())
                .buildClient();
            // ANCHOR_END: usage
            try (client) {
                CosmosDatabaseResponse database = client.createDatabaseIfNotExists("Azure");
                assertEquals(201, database.getStatusCode());
                CosmosContainerResponse container = client
                    .getDatabase("Azure")
                    .createContainerIfNotExists("ServiceContainer", "/name");
                assertEquals(201, container.getStatusCode());
                // Created once: the second call finds it.
                assertEquals(200, client.createDatabaseIfNotExists("Azure").getStatusCode());
            }
        }
    }

    /** The SDK's default connection mode, Direct (no .gatewayMode()): items
     *  go over RNTBD to the replicas the address feed names, on the host
     *  and mapped port the client reached the gateway at. */
    @Test
    void itemsGoThroughDirectModeOnTheMappedPort() throws Exception {
        try (CosmosDBEmulatorContainer emulator = new CosmosDBEmulatorContainer(IMAGE)) {
            emulator.start();
            trust(emulator, tempFolder.resolve("direct.keystore"));
            String endpoint = emulator.getEmulatorEndpoint();
            String hostPort = URI.create(endpoint).getAuthority();
            try (CosmosClient client = new CosmosClientBuilder()
                    .endpointDiscoveryEnabled(false)
                    .endpoint(endpoint)
                    .key(emulator.getEmulatorKey())
                    .buildClient()) {
                client.createDatabaseIfNotExists("direct");
                client.getDatabase("direct").createContainerIfNotExists("items", "/pk");
                CosmosContainer items = client.getDatabase("direct").getContainer("items");

                CosmosItemResponse<ObjectNode> created = items.createItem(item("a", 1));
                assertEquals(201, created.getStatusCode());
                assertDirect(created.getDiagnostics(), hostPort);

                CosmosItemResponse<ObjectNode> read = items.readItem("a", new PartitionKey("a"), ObjectNode.class);
                assertEquals(1, read.getItem().get("n").asInt());
                assertDirect(read.getDiagnostics(), hostPort);

                items.createItem(item("b", 2));
                FeedResponse<Integer> page = items
                    .queryItems("SELECT VALUE c.n FROM c WHERE c.pk = 'b'", new CosmosQueryRequestOptions(), Integer.class)
                    .iterableByPage()
                    .iterator()
                    .next();
                assertEquals(List.of(2), page.getResults());
                assertDirect(page.getCosmosDiagnostics(), hostPort);

                assertEquals(204, items.deleteItem("a", new PartitionKey("a"), new CosmosItemRequestOptions()).getStatusCode());
                CosmosException gone = assertThrows(
                    CosmosException.class,
                    () -> items.readItem("a", new PartitionKey("a"), ObjectNode.class));
                assertEquals(404, gone.getStatusCode());
                assertDirect(gone.getDiagnostics(), hostPort);
            }
        }
    }

    @Test
    void anItemExpiresThroughTheTestClock() throws Exception {
        // withEnv is GenericContainer's documented way to add a variable;
        // the emulator's clock then stands still until moved.
        // ANCHOR: clock
        CosmosDBEmulatorContainer emulator = new CosmosDBEmulatorContainer(IMAGE)
            .withEnv("COSMOS_EMULATOR_CLOCK", "manual");
        // ANCHOR_END: clock
        try (emulator) {
            emulator.start();
            KeyStore trust = trust(emulator, tempFolder.resolve("ttl.keystore"));
            String hostPort = URI.create(emulator.getEmulatorEndpoint()).getAuthority();

            try (CosmosClient client = new CosmosClientBuilder()
                    .endpointDiscoveryEnabled(false)
                    .endpoint(emulator.getEmulatorEndpoint())
                    .key(emulator.getEmulatorKey())
                    .buildClient()) {
                client.createDatabaseIfNotExists("ttl");
                CosmosContainerProperties properties = new CosmosContainerProperties("items", "/pk");
                properties.setDefaultTimeToLiveInSeconds(60);
                client.getDatabase("ttl").createContainerIfNotExists(properties);
                CosmosContainer items = client.getDatabase("ttl").getContainer("items");
                items.createItem(Map.of("id", "a", "pk", "a"));

                advance(emulator, trust, 59);
                assertEquals(List.of("a"), ids(items));
                CosmosItemResponse<ObjectNode> read = items.readItem("a", new PartitionKey("a"), ObjectNode.class);
                assertEquals("a", read.getItem().get("id").asText());
                assertDirect(read.getDiagnostics(), hostPort);

                advance(emulator, trust, 1); // the 60th second: expired
                assertEquals(List.of(), ids(items));
                CosmosException gone = assertThrows(
                    CosmosException.class,
                    () -> items.readItem("a", new PartitionKey("a"), ObjectNode.class));
                assertEquals(404, gone.getStatusCode());
            }
        }
    }

    /** The module's trust store, made the JVM's (as its documentation shows). */
    static KeyStore trust(CosmosDBEmulatorContainer emulator, Path file) throws Exception {
        KeyStore keyStore = emulator.buildNewKeyStore();
        keyStore.store(new FileOutputStream(file.toFile()), emulator.getEmulatorKey().toCharArray());
        System.setProperty("javax.net.ssl.trustStore", file.toString());
        System.setProperty("javax.net.ssl.trustStorePassword", emulator.getEmulatorKey());
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
        return keyStore;
    }

    static ObjectNode item(String id, int n) {
        return JsonNodeFactory.instance.objectNode().put("id", id).put("pk", id).put("n", n);
    }

    /** Diagnostics of an operation served in Direct mode: the client's
     *  mode, and a replica's answer at an rntbd:// address on the host and
     *  port the client used (the container's mapped port, not 8081). */
    static void assertDirect(CosmosDiagnostics diagnostics, String hostPort) {
        String text = diagnostics.toString();
        assertEquals("DIRECT", diagnostics.getDiagnosticsContext().getConnectionMode(), text);
        assertTrue(text.contains("\"storeResult\""), "a replica answered: " + text);
        assertTrue(text.contains("rntbd://" + hostPort + "/"), "a replica on " + hostPort + ": " + text);
    }

    static List<String> ids(CosmosContainer items) {
        return items
            .queryItems("SELECT VALUE c.id FROM c", new CosmosQueryRequestOptions(), String.class)
            .stream()
            .toList();
    }

    /** POST /_emulator/clock {"advance": seconds}, signed with the account
     *  key as an account read is, over HTTPS verified against the trust
     *  store the module built. */
    static void advance(CosmosDBEmulatorContainer emulator, KeyStore trust, int seconds) throws Exception {
        String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(ZonedDateTime.now(ZoneOffset.UTC));
        String payload = "post\n\n\n" + date.toLowerCase() + "\n\n";
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(Base64.getDecoder().decode(emulator.getEmulatorKey()), "HmacSHA256"));
        String signature = Base64.getEncoder().encodeToString(mac.doFinal(payload.getBytes(StandardCharsets.UTF_8)));
        String token = URLEncoder.encode("type=master&ver=1.0&sig=" + signature, StandardCharsets.UTF_8);

        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trust);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, trustManagers.getTrustManagers(), null);
        HttpClient http = HttpClient.newBuilder().sslContext(tls).build();
        HttpResponse<String> response = http.send(
            HttpRequest.newBuilder(URI.create(emulator.getEmulatorEndpoint() + "/_emulator/clock"))
                .header("x-ms-date", date)
                .header("authorization", token)
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"advance\": " + seconds + "}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        assertTrue(response.body().contains("\"now\""), response.body());
    }
}
