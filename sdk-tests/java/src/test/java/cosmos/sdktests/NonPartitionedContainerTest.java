// A container made without a partition key (as the v2 SDKs made them),
// used through the Java SDK 4 as Microsoft's "Migrate non-partitioned
// containers to partitioned containers" describes: the SDK reads the
// system key /_partitionKey; an item with "_partitionKey": "Doe" is in
// the logical partition "Doe", one without it is reached with
// PartitionKey.NONE; point operations, queries, the change feed and
// batches each address one or the other, and a query without a key reads
// both.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosDatabase;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosBatch;
import com.azure.cosmos.models.CosmosBatchResponse;
import com.azure.cosmos.models.CosmosChangeFeedRequestOptions;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosPatchOperations;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedRange;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.PartitionKeyDefinition;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NonPartitionedContainerTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final PartitionKey DOE = new PartitionKey("Doe");

    CosmosClient client;
    CosmosDatabase database;
    CosmosContainer container;

    @BeforeEach
    void container() throws Exception {
        Emulator emulator = Emulators.https();
        client = Emulators.client();
        String name = Emulators.unique("nonpartitioned");
        client.createDatabase(name);
        database = client.getDatabase(name);
        emulator.createContainerWithoutPartitionKey(name, "legacy");
        container = database.getContainer("legacy");
    }

    @AfterEach
    void drop() {
        database.delete();
        client.close();
    }

    static ObjectNode item(String id, String systemKey) {
        ObjectNode item = JSON.createObjectNode().put("id", id).put("name", id);
        if (systemKey != null) {
            item.put("_partitionKey", systemKey);
        }
        return item;
    }

    List<String> ids(String query, PartitionKey key) {
        CosmosQueryRequestOptions options = new CosmosQueryRequestOptions();
        if (key != null) {
            options.setPartitionKey(key);
        }
        List<String> ids = new ArrayList<>();
        container.queryItems(query, options, JsonNode.class).forEach(d -> ids.add(d.get("id").asText()));
        ids.sort(null);
        return ids;
    }

    List<String> changes(PartitionKey key) {
        CosmosChangeFeedRequestOptions options =
            CosmosChangeFeedRequestOptions.createForProcessingFromBeginning(FeedRange.forLogicalPartition(key));
        List<String> ids = new ArrayList<>();
        container.queryChangeFeed(options, JsonNode.class).forEach(d -> ids.add(d.get("id").asText()));
        ids.sort(null);
        return ids;
    }

    @Test
    void itemsWithTheSystemKeyAndWithoutItAreTwoKindsOfPartition() {
        PartitionKeyDefinition definition = container.read().getProperties().getPartitionKeyDefinition();
        assertEquals(List.of("/_partitionKey"), definition.getPaths());

        CosmosItemRequestOptions options = new CosmosItemRequestOptions();
        // Items of the container's non-partitioned days: no _partitionKey.
        container.createItem(item("old-1", null), PartitionKey.NONE, options);
        container.createItem(item("old-2", null));
        // Items after the migration, in the logical partition "Doe".
        JsonNode created = container.createItem(item("id-1", "Doe"), DOE, options).getItem();
        assertEquals("Doe", created.get("_partitionKey").asText());
        container.createItem(item("id-2", "Doe")); // the SDK reads the key from the item
        container.createItem(item("id-1", "Roe"), new PartitionKey("Roe"), options); // another partition's id-1

        assertEquals("Doe", container.readItem("id-1", DOE, JsonNode.class).getItem().get("_partitionKey").asText());
        assertEquals("old-1", container.readItem("old-1", PartitionKey.NONE, JsonNode.class).getItem().get("id").asText());
        CosmosException missing = assertThrows(CosmosException.class,
            () -> container.readItem("id-1", PartitionKey.NONE, JsonNode.class));
        assertEquals(404, missing.getStatusCode());
        CosmosException mismatch = assertThrows(CosmosException.class,
            () -> container.createItem(item("x", "Doe"), PartitionKey.NONE, options));
        assertEquals(400, mismatch.getStatusCode());

        // Queries of one partition, of PartitionKey.NONE, of all.
        assertEquals(List.of("id-1", "id-2"), ids("SELECT * FROM c", DOE));
        // A query given PartitionKey.NONE is sent by this SDK with no key
        // (the empty key's range is the whole container): the items
        // without a key are those lacking _partitionKey.
        assertEquals(List.of("old-1", "old-2"), ids("SELECT * FROM c WHERE NOT IS_DEFINED(c._partitionKey)", null));
        assertEquals(List.of("id-1", "id-1", "id-2", "old-1", "old-2"), ids("SELECT * FROM c", null));
        assertEquals(List.of("id-1", "id-2"), ids("SELECT * FROM c WHERE c._partitionKey = 'Doe'", null));

        // The change feed of one logical partition.
        assertEquals(List.of("id-1", "id-2"), changes(DOE));
        // (This SDK refuses a feed range of PartitionKey.NONE itself: "PartitionKey has fewer
        // components than defined the collection resource".)

        // Writes of each kind.
        ObjectNode replaced = item("id-2", "Doe").put("name", "replaced");
        assertEquals("replaced",
            container.replaceItem(replaced, "id-2", DOE, options).getItem().get("name").asText());
        container.upsertItem(item("old-2", null).put("name", "upserted"), PartitionKey.NONE, options);
        assertEquals("upserted", container.readItem("old-2", PartitionKey.NONE, JsonNode.class).getItem().get("name").asText());
        container.patchItem("id-1", DOE, CosmosPatchOperations.create().set("/name", "patched"), JsonNode.class);
        assertEquals("patched", container.readItem("id-1", DOE, JsonNode.class).getItem().get("name").asText());

        // A transactional batch in "Doe".
        CosmosBatch batch = CosmosBatch.createCosmosBatch(DOE);
        batch.createItemOperation(item("id-3", "Doe"));
        batch.readItemOperation("id-1");
        CosmosBatchResponse answered = container.executeCosmosBatch(batch);
        assertTrue(answered.isSuccessStatusCode(), "batch: " + answered.getStatusCode());
        assertEquals(List.of(201, 200), List.of(answered.getResults().get(0).getStatusCode(),
            answered.getResults().get(1).getStatusCode()));
        assertEquals("patched", answered.getResults().get(1).getItem(JsonNode.class).get("name").asText());

        // Deletes address their partition.
        container.deleteItem("old-1", PartitionKey.NONE, options);
        container.deleteItem("id-3", DOE, options);
        assertEquals(List.of("id-1", "id-1", "id-2", "old-2"), ids("SELECT * FROM c", null));
    }
}
