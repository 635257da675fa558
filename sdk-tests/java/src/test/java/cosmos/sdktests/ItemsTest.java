// Items through the SDK: create, read, replace, upsert, delete, optimistic
// concurrency with ETags, read feed, and patch (with its conditions).
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosItemResponse;
import com.azure.cosmos.models.CosmosPatchItemRequestOptions;
import com.azure.cosmos.models.CosmosPatchOperations;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ItemsTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static ObjectNode item(String id, String pk) {
        return JSON.createObjectNode().put("id", id).put("pk", pk);
    }

    @Test
    void itemLifecycle() throws Exception {
        try (Db db = new Db("items")) {
            CosmosContainer items = db.container("items");
            PartitionKey a = new PartitionKey("a");

            CosmosItemResponse<ObjectNode> created = items.createItem(item("1", "a").put("n", 1));
            assertEquals(201, created.getStatusCode());
            assertEquals(db.emulator.now(), created.getItem().get("_ts").asLong(), "_ts follows the test clock");
            String etag = created.getETag();
            assertNotNull(etag);
            assertEquals(etag, created.getItem().get("_etag").asText());

            CosmosException conflict = assertThrows(CosmosException.class, () -> items.createItem(item("1", "a")));
            assertEquals(409, conflict.getStatusCode());
            // The same id under another partition key is another item.
            assertEquals(201, items.createItem(item("1", "b")).getStatusCode());

            ObjectNode read = items.readItem("1", a, ObjectNode.class).getItem();
            assertEquals(1, read.get("n").asInt());

            CosmosItemResponse<ObjectNode> replaced = items.replaceItem(item("1", "a").put("n", 2), "1", a,
                new CosmosItemRequestOptions().setIfMatchETag(etag));
            assertEquals(200, replaced.getStatusCode());
            assertNotEquals(etag, replaced.getETag());
            // The old ETag no longer matches.
            CosmosException stale = assertThrows(CosmosException.class, () -> items.replaceItem(item("1", "a").put("n", 3), "1", a,
                new CosmosItemRequestOptions().setIfMatchETag(etag)));
            assertEquals(412, stale.getStatusCode());
            assertEquals(2, items.readItem("1", a, ObjectNode.class).getItem().get("n").asInt());

            assertEquals(200, items.upsertItem(item("1", "a").put("n", 4)).getStatusCode());
            assertEquals(201, items.upsertItem(item("2", "a").put("n", 5)).getStatusCode());

            List<String> inA = items.readAllItems(a, ObjectNode.class).stream()
                .map(i -> i.get("id").asText()).sorted().collect(Collectors.toList());
            assertEquals(List.of("1", "2"), inA);
            List<String> all = items.queryItems("SELECT VALUE c.pk || c.id FROM c", new CosmosQueryRequestOptions(), String.class)
                .stream().sorted().collect(Collectors.toList());
            assertEquals(List.of("a1", "a2", "b1"), all);

            assertEquals(204, items.deleteItem("1", a, new CosmosItemRequestOptions()).getStatusCode());
            CosmosException gone = assertThrows(CosmosException.class, () -> items.readItem("1", a, ObjectNode.class));
            assertEquals(404, gone.getStatusCode());
            CosmosException twice = assertThrows(CosmosException.class, () -> items.deleteItem("1", a, new CosmosItemRequestOptions()));
            assertEquals(404, twice.getStatusCode());
            // The other partition's item with that id is untouched.
            assertEquals("b", items.readItem("1", new PartitionKey("b"), ObjectNode.class).getItem().get("pk").asText());
        }
    }

    @Test
    void patch() {
        try (Db db = new Db("patch")) {
            CosmosContainer items = db.container("items");
            PartitionKey pk = new PartitionKey("p");
            ObjectNode doc = item("x", "p").put("count", 1).put("name", "old").put("drop", true);
            doc.putArray("tags").add("a");
            items.createItem(doc);

            CosmosPatchOperations ops = CosmosPatchOperations.create()
                .increment("/count", 41)
                .set("/name", "new")
                .remove("/drop")
                .add("/tags/-", "b")
                .add("/nested", JSON.createObjectNode().put("k", 1));
            ObjectNode patched = items.patchItem("x", pk, ops, ObjectNode.class).getItem();
            assertEquals(42, patched.get("count").asInt());
            assertEquals("new", patched.get("name").asText());
            assertFalse(patched.has("drop"));
            assertEquals("[\"a\",\"b\"]", patched.get("tags").toString());
            assertEquals(1, patched.get("nested").get("k").asInt());

            // A conditional patch whose condition is false: 412, nothing changes.
            CosmosPatchItemRequestOptions when = new CosmosPatchItemRequestOptions();
            when.setFilterPredicate("FROM c WHERE c.count > 100");
            CosmosException unmet = assertThrows(CosmosException.class,
                () -> items.patchItem("x", pk, CosmosPatchOperations.create().set("/name", "no"), when, ObjectNode.class));
            assertEquals(412, unmet.getStatusCode());
            when.setFilterPredicate("FROM c WHERE c.count = 42");
            assertEquals("yes", items.patchItem("x", pk, CosmosPatchOperations.create().set("/name", "yes"), when, ObjectNode.class)
                .getItem().get("name").asText());

            // Removing what is not there is refused; the item is unchanged.
            CosmosException missing = assertThrows(CosmosException.class,
                () -> items.patchItem("x", pk, CosmosPatchOperations.create().remove("/absent"), ObjectNode.class));
            assertEquals(400, missing.getStatusCode());
            // Patching the partition key is refused.
            CosmosException pkPatch = assertThrows(CosmosException.class,
                () -> items.patchItem("x", pk, CosmosPatchOperations.create().set("/pk", "q"), ObjectNode.class));
            assertEquals(400, pkPatch.getStatusCode());
            CosmosException absent = assertThrows(CosmosException.class,
                () -> items.patchItem("nope", pk, CosmosPatchOperations.create().set("/a", 1), ObjectNode.class));
            assertEquals(404, absent.getStatusCode());
            assertTrue(items.readItem("x", pk, ObjectNode.class).getItem().get("name").asText().equals("yes"));
        }
    }
}
