// The application's configuration as the library's documentation shows it:
// AbstractCosmosConfiguration, a CosmosClientBuilder bean in gateway mode
// with the account key, a CosmosConfig, and the repositories enabled. The
// endpoint is the `cosmos.endpoint` property (SharedEmulator).
package cosmos.springtests;

import com.azure.cosmos.ConsistencyLevel;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.spring.data.cosmos.config.AbstractCosmosConfiguration;
import com.azure.spring.data.cosmos.config.CosmosConfig;
import com.azure.spring.data.cosmos.repository.config.EnableCosmosRepositories;
import cosmos.sdktests.Emulator;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration
@EnableCosmosRepositories(basePackageClasses = CosmosTestConfig.class)
public class CosmosTestConfig extends AbstractCosmosConfiguration {
    public static final String DATABASE = "spring-data";

    @Value("${cosmos.endpoint}")
    private String endpoint;

    /**
     * The client as Spring Data builds it: with `-Dcosmos.mode=default`, no
     * connection mode set (the SDK's default, Direct mode); else gateway.
     */
    @Bean
    public CosmosClientBuilder cosmosClientBuilder() {
        CosmosClientBuilder builder = new CosmosClientBuilder()
            .endpoint(endpoint)
            .key(Emulator.KEY)
            .consistencyLevel(ConsistencyLevel.SESSION)
            .contentResponseOnWriteEnabled(true);
        return "default".equals(System.getProperty("cosmos.mode")) ? builder : builder.gatewayMode();
    }

    @Override
    @Bean
    public CosmosConfig cosmosConfig() {
        return CosmosConfig.builder().enableQueryMetrics(true).build();
    }

    @Override
    protected String getDatabaseName() {
        return DATABASE;
    }
}
