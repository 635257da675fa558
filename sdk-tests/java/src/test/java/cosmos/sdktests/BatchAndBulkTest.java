// Transactional batch (all or nothing in one partition key) and bulk
// (executeBulkOperations, which groups operations by range and sends
// them as batches of their own) through the SDK.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosBatch;
import com.azure.cosmos.models.CosmosBatchOperationResult;
import com.azure.cosmos.models.CosmosBatchResponse;
import com.azure.cosmos.models.CosmosBulkOperationResponse;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.CosmosPatchOperations;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class BatchAndBulkTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static ObjectNode item(String id, String pk, int n) {
        return JSON.createObjectNode().put("id", id).put("pk", pk).put("n", n);
    }

    @Test
    void transactionalBatch() {
        try (Db db = new Db("batch")) {
            CosmosContainer items = db.container("items");
            PartitionKey pk = new PartitionKey("b");
            items.createItem(item("old", "b", 0));
            items.createItem(item("doomed", "b", 0));

            CosmosBatch batch = CosmosBatch.createCosmosBatch(pk);
            batch.createItemOperation(item("new", "b", 1));
            batch.upsertItemOperation(item("up", "b", 2));
            batch.replaceItemOperation("old", item("old", "b", 3));
            batch.readItemOperation("old");
            batch.patchItemOperation("new", CosmosPatchOperations.create().increment("/n", 10));
            batch.deleteItemOperation("doomed");
            CosmosBatchResponse response = items.executeCosmosBatch(batch);
            assertTrue(response.isSuccessStatusCode(), response.getErrorMessage());
            assertEquals(200, response.getStatusCode());
            List<Integer> statuses = response.getResults().stream()
                .map(CosmosBatchOperationResult::getStatusCode).collect(Collectors.toList());
            assertEquals(List.of(201, 201, 200, 200, 200, 204), statuses);
            assertEquals(3, response.getResults().get(3).getItem(ObjectNode.class).get("n").asInt());
            assertEquals(11, items.readItem("new", pk, ObjectNode.class).getItem().get("n").asInt());
            CosmosException gone = assertThrows(CosmosException.class, () -> items.readItem("doomed", pk, ObjectNode.class));
            assertEquals(404, gone.getStatusCode());

            // One operation fails: none is applied; it reports its status,
            // the others 424 (failed dependency).
            CosmosBatch failing = CosmosBatch.createCosmosBatch(pk);
            failing.createItemOperation(item("fresh", "b", 1));
            failing.createItemOperation(item("old", "b", 9)); // exists: 409
            failing.upsertItemOperation(item("up", "b", 99));
            CosmosBatchResponse failed = items.executeCosmosBatch(failing);
            assertFalse(failed.isSuccessStatusCode());
            assertEquals(409, failed.getStatusCode());
            assertEquals(List.of(424, 409, 424), failed.getResults().stream()
                .map(CosmosBatchOperationResult::getStatusCode).collect(Collectors.toList()));
            CosmosException notCreated = assertThrows(CosmosException.class, () -> items.readItem("fresh", pk, ObjectNode.class));
            assertEquals(404, notCreated.getStatusCode());
            assertEquals(2, items.readItem("up", pk, ObjectNode.class).getItem().get("n").asInt());
        }
    }

    @Test
    void bulkAcrossRanges() {
        try (Db db = new Db("bulk")) {
            CosmosContainer items = db.container("items", 12000);
            assertEquals(2, items.getFeedRanges().size());
            List<CosmosItemOperation> creates = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                String pk = "k" + (i % 25);
                creates.add(CosmosBulkOperations.getCreateItemOperation(item("b" + i, pk, i), new PartitionKey(pk)));
            }
            List<Integer> statuses = new ArrayList<>();
            for (CosmosBulkOperationResponse<Object> r : items.<Object>executeBulkOperations(creates)) {
                assertNull(r.getException());
                statuses.add(r.getResponse().getStatusCode());
            }
            assertEquals(200, statuses.size());
            assertTrue(statuses.stream().allMatch(s -> s == 201), statuses.toString());

            // Mixed: delete the even ones, replace the odd ones, create one that exists.
            List<CosmosItemOperation> mixed = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                PartitionKey pk = new PartitionKey("k" + (i % 25));
                mixed.add(i % 2 == 0
                    ? CosmosBulkOperations.getDeleteItemOperation("b" + i, pk)
                    : CosmosBulkOperations.getReplaceItemOperation("b" + i, item("b" + i, "k" + (i % 25), -i), pk));
            }
            mixed.add(CosmosBulkOperations.getCreateItemOperation(item("b1", "k1", 0), new PartitionKey("k1")));
            int deleted = 0;
            int replaced = 0;
            int conflicts = 0;
            for (CosmosBulkOperationResponse<Object> r : items.<Object>executeBulkOperations(mixed)) {
                switch (r.getResponse().getStatusCode()) {
                    case 204: deleted++; break;
                    case 200: replaced++; break;
                    case 409: conflicts++; break;
                    default: throw new AssertionError("status " + r.getResponse().getStatusCode());
                }
            }
            assertEquals(List.of(100, 100, 1), List.of(deleted, replaced, conflicts));
            assertEquals(List.of(100), items.queryItems("SELECT VALUE COUNT(1) FROM c", new CosmosQueryRequestOptions(), Integer.class)
                .stream().collect(Collectors.toList()));
            assertEquals(List.of(0), items.queryItems("SELECT VALUE COUNT(1) FROM c WHERE c.n > 0", new CosmosQueryRequestOptions(), Integer.class)
                .stream().collect(Collectors.toList()));
        }
    }
}
