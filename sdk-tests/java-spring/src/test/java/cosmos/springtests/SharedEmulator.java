// The emulator the test classes share, started on first use and stopped when
// the JVM exits: over HTTPS, with the manual test clock (sdk-tests/java's
// Emulator.java, compiled in by the pom). Its certificate becomes the JVM's
// trust store (javax.net.ssl.trustStore, a PKCS12 store holding exactly that
// certificate) before Spring builds any client, so verification stays on.
//
// Spring learns the endpoint as an application learns it from its
// configuration: a property, `cosmos.endpoint`, which EmulatorTest
// registers with @DynamicPropertySource (CosmosTestConfig reads it).
package cosmos.springtests;

import cosmos.sdktests.Emulator;
import org.springframework.test.context.DynamicPropertyRegistry;

public final class SharedEmulator {
    private static Emulator emulator;

    private SharedEmulator() {}

    public static synchronized Emulator get() {
        if (emulator == null) {
            emulator = Emulator.startTrustedByTheJvm();
        }
        return emulator;
    }

    /** For @DynamicPropertySource: starts the emulator before the context. */
    public static void register(DynamicPropertyRegistry registry) {
        registry.add("cosmos.endpoint", () -> get().endpoint);
    }
}
