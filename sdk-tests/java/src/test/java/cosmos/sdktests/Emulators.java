// The emulators the test classes share, started on first use and stopped
// when the JVM exits: one over HTTPS, which every SDK test uses, and one
// over HTTP, which only TransportTest uses (azure-cosmos speaks TLS to
// every endpoint, http:// ones included; see TransportTest).
//
// The HTTPS one starts first: the trust store made from its certificate
// becomes the JVM's (javax.net.ssl.trustStore, as Testcontainers'
// CosmosDBEmulatorContainer documents) before any client exists, so
// verification stays on and trusts exactly that certificate. Tests keep
// apart by database names.
package cosmos.sdktests;

import com.azure.cosmos.ConsistencyLevel;
import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosClientBuilder;
import java.util.UUID;

public final class Emulators {
    private static Emulator https;
    private static Emulator http;

    private Emulators() {}

    public static synchronized Emulator https() {
        if (https == null) {
            https = Emulator.startTrustedByTheJvm();
        }
        return https;
    }

    public static synchronized Emulator http() {
        https(); // the trust store first, whatever runs first
        if (http == null) {
            try {
                Emulator started = Emulator.start(false);
                Runtime.getRuntime().addShutdownHook(new Thread(started::close));
                http = started;
            } catch (Exception e) {
                throw new IllegalStateException("cannot start the HTTP emulator", e);
            }
        }
        return http;
    }

    /**
     * The connection mode of this run: `-Dcosmos.mode=direct` for the SDK's
     * default (Direct mode: RNTBD to the replicas the gateway names),
     * anything else for gateway mode.
     */
    public static boolean direct() {
        return "direct".equals(System.getProperty("cosmos.mode"));
    }

    /** The client as an application builds it: the run's mode, the account key. */
    public static CosmosClientBuilder builder(Emulator emulator) {
        CosmosClientBuilder builder = new CosmosClientBuilder()
            .endpoint(emulator.endpoint)
            .key(Emulator.KEY)
            .consistencyLevel(ConsistencyLevel.SESSION)
            .contentResponseOnWriteEnabled(true);
        return direct() ? builder.directMode() : builder.gatewayMode();
    }

    public static CosmosClient client() {
        return builder(https()).buildClient();
    }

    public static CosmosAsyncClient asyncClient() {
        return builder(https()).buildAsyncClient();
    }

    /** A name of its own for one test's database. */
    public static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
