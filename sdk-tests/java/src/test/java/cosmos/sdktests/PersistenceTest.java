// A data directory (--data-dir) under the run's mode: what the SDK was
// told was written (upserts, a batch, a patch, a delete) is there after
// the process is killed with SIGKILL and started again on the same
// directory, read back by a new client in the same mode
// (in Direct mode every write and read went over RNTBD, through the same
// durability step as over HTTP).
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.models.CosmosBatch;
import com.azure.cosmos.models.CosmosPatchOperations;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class PersistenceTest {

    private static ObjectNode item(String id, int v) {
        return JsonNodeFactory.instance.objectNode().put("id", id).put("pk", "p").put("v", v);
    }

    @Test
    void everyAcknowledgedWriteOutlivesAKill() throws Exception {
        Emulators.https(); // the JVM's trust store first
        Path data = Files.createTempDirectory("cosmos-sdk-tests-java-data-");
        String db = Emulators.unique("persist");
        try (Emulator first = Emulator.start(true, "--data-dir", data.toString());
                CosmosClient client = Emulators.builder(first).buildClient()) {
            client.createDatabase(db);
            client.getDatabase(db).createContainer("c", "/pk");
            CosmosContainer items = client.getDatabase(db).getContainer("c");
            for (int i = 0; i < 20; i++) {
                items.upsertItem(item("i" + i, i));
            }
            CosmosBatch batch = CosmosBatch.createCosmosBatch(new PartitionKey("p"));
            batch.createItemOperation(item("b1", 100));
            batch.createItemOperation(item("b2", 101));
            assertTrue(items.executeCosmosBatch(batch).isSuccessStatusCode());
            items.patchItem("i3", new PartitionKey("p"), CosmosPatchOperations.create().set("/v", 33), JsonNode.class);
            items.deleteItem("i4", new PartitionKey("p"), null);
            first.kill();
        }
        try (Emulator second = Emulator.start(true, "--data-dir", data.toString());
                CosmosClient client = Emulators.builder(second).buildClient()) {
            CosmosContainer items = client.getDatabase(db).getContainer("c");
            List<String> ids = items.queryItems("SELECT VALUE c.id FROM c", new CosmosQueryRequestOptions(), String.class)
                .stream().sorted().collect(Collectors.toList());
            assertEquals(21, ids.size(), ids.toString());
            assertTrue(ids.containsAll(List.of("b1", "b2", "i0", "i19")) && !ids.contains("i4"), ids.toString());
            assertEquals(33, items.readItem("i3", new PartitionKey("p"), JsonNode.class).getItem().get("v").asInt());
            assertEquals(101, items.readItem("b2", new PartitionKey("p"), JsonNode.class).getItem().get("v").asInt());
        }
    }
}
