// What every test class shares: Spring's test support with CosmosTestConfig,
// and the emulator's endpoint as the `cosmos.endpoint` property. Declared
// once here, so the classes share one cached application context (one
// client, one set of repositories) rather than one each.
package cosmos.springtests;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

@SpringJUnitConfig(CosmosTestConfig.class)
abstract class EmulatorTest {
    @DynamicPropertySource
    static void emulator(DynamicPropertyRegistry registry) {
        SharedEmulator.register(registry);
    }
}
