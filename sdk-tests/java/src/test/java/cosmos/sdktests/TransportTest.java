// How the Java SDK reaches the emulator. Over HTTPS, verification on,
// trusting exactly the emulator's certificate (the trust store Emulators
// makes from it, as Testcontainers does from /_explorer/emulator.pem).
//
// Over plain HTTP it cannot: azure-cosmos configures its reactor-netty
// client with secure(...) unconditionally (ReactorNettyClient), so it
// speaks TLS to every endpoint, an http:// one included, and the emulator's
// plain-HTTP port answers the handshake with HTTP. The last test pins this
// down, so that a release of the SDK that speaks plain HTTP shows up here.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;

class TransportTest {

    @Test
    void theExplorerServesTheCertificateTheSdkTrusts() throws Exception {
        Emulator emulator = Emulators.https();
        HttpResponse<String> pem = emulator.getUnsigned("_explorer/emulator.pem");
        assertEquals(200, pem.statusCode());
        assertEquals(Files.readString(emulator.certPath).strip(), pem.body().strip());
        try (CosmosClient client = Emulators.client()) {
            assertTrue(client.getDatabase("none").getId().equals("none"));
            client.readAllDatabases().stream().count();
        }
    }

    @Test
    void aClientTrustingOnlyThePublicAuthoritiesIsRefused() throws Exception {
        Emulator emulator = Emulators.https();
        KeyStore cacerts = KeyStore.getInstance(KeyStore.getDefaultType());
        try (InputStream in = Files.newInputStream(Path.of(System.getProperty("java.home"), "lib", "security", "cacerts"))) {
            cacerts.load(in, null);
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(cacerts);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        HttpClient client = HttpClient.newBuilder().sslContext(context).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(emulator.endpoint + "_explorer/emulator.pem")).build();
        assertThrows(SSLHandshakeException.class, () -> client.send(request, HttpResponse.BodyHandlers.ofString()));
    }

    @Test
    void theJavaSdkSpeaksTlsToAnHttpEndpoint() {
        Emulator plain = Emulators.http();
        assertTrue(plain.endpoint.startsWith("http://"), plain.endpoint);
        RuntimeException refused = assertThrows(RuntimeException.class,
            () -> Emulators.builder(plain).buildClient().close());
        assertTrue(String.valueOf(refused.getMessage()).contains("not an SSL/TLS record"), refused.getMessage());
        assertTrue(String.valueOf(refused.getMessage()).contains("https://" + plain.endpoint.substring("http://".length())),
            "the SDK addressed the http:// endpoint as https://: " + refused.getMessage());
    }
}
