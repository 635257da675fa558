// A container deleted and created again under the same name, while another
// client still holds the old one in its cache (its RID and partition key
// definition). The service tells that client so: in Direct mode a replica
// answers 410 with substatus 1000 (NameCacheIsStale) to a request whose
// ResourceId is the old container's; the SDK then reads the container
// again and retries (JAVA `StaleResourceRetryPolicy`), computing the item's
// partition key from the new definition. Without that answer the write
// would go to the new container with a key read from the old path.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

class StaleContainerTest {

    @Test
    void aClientHoldingTheOldContainerWritesToTheNewOneWithItsKey() {
        try (CosmosClient holder = Emulators.client();
                CosmosClient other = Emulators.builder(Emulators.https()).gatewayMode().buildClient()) {
            String db = Emulators.unique("stale");
            holder.createDatabase(db);
            holder.getDatabase(db).createContainer("c", "/pk");
            CosmosContainer cached = holder.getDatabase(db).getContainer("c");
            ObjectNode first = JsonNodeFactory.instance.objectNode().put("id", "a").put("pk", "p");
            assertEquals(201, cached.createItem(first).getStatusCode());
            // Another client drops it and creates it again, keyed by /other.
            other.getDatabase(db).getContainer("c").delete();
            other.getDatabase(db).createContainer(new CosmosContainerProperties("c", "/other"));

            ObjectNode second = JsonNodeFactory.instance.objectNode()
                .put("id", "b").put("pk", "p").put("other", "q");
            var created = cached.createItem(second);
            assertEquals(201, created.getStatusCode());
            if (Emulators.direct()) {
                // The replica's answer to the old RID, then the retry's.
                String diagnostics = created.getDiagnostics().toString();
                assertTrue(diagnostics.contains("\"statusCode\":410,\"subStatusCode\":1000"), diagnostics);
            }
            // Stored under its key by the new definition, /other = "q".
            JsonNode read = other.getDatabase(db).getContainer("c")
                .readItem("b", new PartitionKey("q"), JsonNode.class).getItem();
            assertEquals("p", read.get("pk").asText());
            assertEquals("q", cached.readItem("b", new PartitionKey("q"), JsonNode.class)
                .getItem().get("other").asText());
            holder.getDatabase(db).delete();
        }
    }
}
