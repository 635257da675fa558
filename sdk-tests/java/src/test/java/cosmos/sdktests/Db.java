// One test's database on a shared emulator, with the client that made it;
// closing deletes the database and closes the client.
package cosmos.sdktests;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosDatabase;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.ThroughputProperties;

public final class Db implements AutoCloseable {
    public final Emulator emulator;
    public final CosmosClient client;
    public final CosmosDatabase database;
    public final String name;

    public Db(String prefix) {
        this.emulator = Emulators.https();
        this.client = Emulators.client();
        this.name = Emulators.unique(prefix);
        client.createDatabase(name);
        this.database = client.getDatabase(name);
    }

    /** A container partitioned on /pk. */
    public CosmosContainer container(String id) {
        database.createContainer(id, "/pk");
        return database.getContainer(id);
    }

    /** A container partitioned on /pk with its own manual throughput (ranges: docs/src/ranges.md). */
    public CosmosContainer container(String id, int throughput) {
        database.createContainer(new CosmosContainerProperties(id, "/pk"),
            ThroughputProperties.createManualThroughput(throughput));
        return database.getContainer(id);
    }

    @Override
    public void close() {
        try {
            database.delete();
        } catch (CosmosException e) {
            // Already gone: the test deleted it.
        } finally {
            client.close();
        }
    }
}
