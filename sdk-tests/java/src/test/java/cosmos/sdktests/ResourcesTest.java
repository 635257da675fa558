// Databases and containers through the SDK: create, read, list, replace,
// delete, the statuses of refusals, defaultTimeToLive absent, -1 or n, and
// throughput read and replace.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosContainerResponse;
import com.azure.cosmos.models.CosmosDatabaseProperties;
import com.azure.cosmos.models.PartitionKeyDefinition;
import com.azure.cosmos.models.PartitionKeyDefinitionVersion;
import com.azure.cosmos.models.ThroughputProperties;
import com.azure.cosmos.models.ThroughputResponse;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ResourcesTest {

    @Test
    void databaseLifecycle() {
        try (CosmosClient client = Emulators.client()) {
            String name = Emulators.unique("dbs");
            assertEquals(201, client.createDatabase(name).getStatusCode());
            CosmosException conflict = assertThrows(CosmosException.class, () -> client.createDatabase(name));
            assertEquals(409, conflict.getStatusCode());
            assertEquals(200, client.createDatabaseIfNotExists(name).getStatusCode());
            CosmosDatabaseProperties read = client.getDatabase(name).read().getProperties();
            assertEquals(name, read.getId());
            List<String> listed = client.readAllDatabases().stream()
                .map(CosmosDatabaseProperties::getId).collect(Collectors.toList());
            assertTrue(listed.contains(name), listed.toString());
            List<String> queried = client
                .queryDatabases("SELECT * FROM d WHERE d.id = '" + name + "'", null)
                .stream().map(CosmosDatabaseProperties::getId).collect(Collectors.toList());
            assertEquals(List.of(name), queried);
            assertEquals(204, client.getDatabase(name).delete().getStatusCode());
            CosmosException gone = assertThrows(CosmosException.class, () -> client.getDatabase(name).read());
            assertEquals(404, gone.getStatusCode());
        }
    }

    /**
     * The SDK sends no partition key version unless asked (docs/src/ranges.md):
     * the container then hashes with version 1, as on the service.
     */
    @Test
    void thePartitionKeyVersionIsOneUnlessAskedFor() {
        try (Db db = new Db("pkver")) {
            PartitionKeyDefinition sent = db.database.createContainer("plain", "/pk")
                .getProperties().getPartitionKeyDefinition();
            assertEquals(PartitionKeyDefinitionVersion.V1, sent.getVersion());
            CosmosContainerProperties v2 = new CosmosContainerProperties("v2", "/pk");
            v2.getPartitionKeyDefinition().setVersion(PartitionKeyDefinitionVersion.V2);
            db.database.createContainer(v2);
            assertEquals(PartitionKeyDefinitionVersion.V2,
                db.database.getContainer("v2").read().getProperties().getPartitionKeyDefinition().getVersion());
        }
    }

    @Test
    void containerLifecycleWithTimeToLive() {
        try (Db db = new Db("colls")) {
            // Absent: TTL off, the property not returned.
            CosmosContainerResponse plain = db.database.createContainer("plain", "/pk");
            assertEquals(201, plain.getStatusCode());
            assertNull(plain.getProperties().getDefaultTimeToLiveInSeconds());

            CosmosContainerProperties on = new CosmosContainerProperties("on", "/pk");
            on.setDefaultTimeToLiveInSeconds(-1);
            assertEquals(-1, db.database.createContainer(on).getProperties().getDefaultTimeToLiveInSeconds());

            CosmosContainerProperties timed = new CosmosContainerProperties("timed", "/pk");
            timed.setDefaultTimeToLiveInSeconds(90);
            db.database.createContainer(timed);
            CosmosContainer container = db.database.getContainer("timed");
            CosmosContainerProperties read = container.read().getProperties();
            assertEquals(90, read.getDefaultTimeToLiveInSeconds());
            assertEquals("/pk", read.getPartitionKeyDefinition().getPaths().get(0));

            // Replace: change the default, then switch it off.
            read.setDefaultTimeToLiveInSeconds(30);
            assertEquals(30, container.replace(read).getProperties().getDefaultTimeToLiveInSeconds());
            read.setDefaultTimeToLiveInSeconds(null);
            assertNull(container.replace(read).getProperties().getDefaultTimeToLiveInSeconds());

            // 0 and values below -1 are refused (docs/src/ttl.md).
            for (int bad : new int[] {0, -2}) {
                CosmosContainerProperties invalid = new CosmosContainerProperties("bad" + (bad + 10), "/pk");
                invalid.setDefaultTimeToLiveInSeconds(bad);
                CosmosException refused = assertThrows(CosmosException.class, () -> db.database.createContainer(invalid));
                assertEquals(400, refused.getStatusCode(), "defaultTtl " + bad);
            }

            List<String> ids = db.database.readAllContainers().stream()
                .map(CosmosContainerProperties::getId).sorted().collect(Collectors.toList());
            assertEquals(List.of("on", "plain", "timed"), ids);

            CosmosException conflict = assertThrows(CosmosException.class, () -> db.database.createContainer("plain", "/pk"));
            assertEquals(409, conflict.getStatusCode());
            assertEquals(204, db.database.getContainer("plain").delete().getStatusCode());
            CosmosException gone = assertThrows(CosmosException.class, () -> db.database.getContainer("plain").read());
            assertEquals(404, gone.getStatusCode());
        }
    }

    @Test
    void throughputReadAndReplace() {
        try (Db db = new Db("offers")) {
            CosmosContainer container = db.container("items", 400);
            ThroughputResponse read = container.readThroughput();
            assertEquals(400, read.getProperties().getManualThroughput());
            ThroughputResponse replaced = container.replaceThroughput(ThroughputProperties.createManualThroughput(1000));
            assertEquals(1000, replaced.getProperties().getManualThroughput());
            assertEquals(1000, container.readThroughput().getProperties().getManualThroughput());
            // Below the minimum: refused, unchanged.
            CosmosException refused = assertThrows(CosmosException.class,
                () -> container.replaceThroughput(ThroughputProperties.createManualThroughput(100)));
            assertEquals(400, refused.getStatusCode());
            assertEquals(1000, container.readThroughput().getProperties().getManualThroughput());

            // Autoscale on a new container.
            db.database.createContainer(new CosmosContainerProperties("auto", "/pk"),
                ThroughputProperties.createAutoscaledThroughput(4000));
            ThroughputResponse auto = db.database.getContainer("auto").readThroughput();
            assertEquals(4000, auto.getProperties().getAutoscaleMaxThroughput());

            // Created without throughput in a database without shared
            // throughput: a container of its own 400 RU/s.
            db.database.createContainer("plain", "/pk");
            assertEquals(400, db.database.getContainer("plain").readThroughput().getProperties().getManualThroughput());
        }
        // Shared throughput: the database's offer; a container in it has
        // none of its own, so the SDK finds no offer for its RID and answers
        // 400 "No offers found for the resource" itself.
        try (CosmosClient client = Emulators.client()) {
            String name = Emulators.unique("shared");
            client.createDatabase(name, ThroughputProperties.createManualThroughput(1000));
            try {
                assertEquals(1000, client.getDatabase(name).readThroughput().getProperties().getManualThroughput());
                client.getDatabase(name).createContainer("inside", "/pk");
                CosmosException none = assertThrows(CosmosException.class,
                    () -> client.getDatabase(name).getContainer("inside").readThroughput());
                assertEquals(400, none.getStatusCode());
                assertTrue(none.getMessage().contains("No offers found"), none.getMessage());
            } finally {
                client.getDatabase(name).delete();
            }
        }
    }
}
