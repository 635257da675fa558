// The Java SDK's newer item APIs, in the run's mode: readMany,
// deleteAllItemsByPartitionKey, a conditional patch, priority-based
// execution, an end-to-end latency budget, and a client that opens its
// connections and caches at build time (proactive initialisation: in
// Direct mode, connections to every replica of the container). Each
// asserts what the service answers.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosContainerProactiveInitConfigBuilder;
import com.azure.cosmos.CosmosEndToEndOperationLatencyPolicyConfigBuilder;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.ThroughputControlGroupConfigBuilder;
import com.azure.cosmos.models.CosmosContainerIdentity;
import com.azure.cosmos.models.CosmosItemIdentity;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosPatchItemRequestOptions;
import com.azure.cosmos.models.CosmosPatchOperations;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.PriorityLevel;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class NewerApisTest {

    private static ObjectNode item(String id, String pk, int v) {
        return JsonNodeFactory.instance.objectNode().put("id", id).put("pk", pk).put("v", v);
    }

    @Test
    void readManyDeleteByPartitionKeyConditionalPatchAndPriority() {
        try (CosmosClient client = Emulators.client()) {
            String db = Emulators.unique("newer");
            client.createDatabase(db);
            client.getDatabase(db).createContainer("c", "/pk");
            CosmosContainer container = client.getDatabase(db).getContainer("c");
            for (int i = 0; i < 6; i++) {
                container.createItem(item("i" + i, i % 2 == 0 ? "even" : "odd", i));
            }
            // readMany: the items named, across partition keys; a missing one is left out.
            FeedResponse<JsonNode> many = container.readMany(List.of(
                new CosmosItemIdentity(new PartitionKey("even"), "i0"),
                new CosmosItemIdentity(new PartitionKey("odd"), "i3"),
                new CosmosItemIdentity(new PartitionKey("odd"), "nope")), JsonNode.class);
            Set<String> ids = many.getResults().stream().map(n -> n.get("id").asText()).collect(Collectors.toSet());
            assertEquals(Set.of("i0", "i3"), ids);

            // A patch whose condition does not hold is 412 and changes nothing.
            CosmosPatchItemRequestOptions unless = new CosmosPatchItemRequestOptions();
            unless.setFilterPredicate("FROM c WHERE c.v > 100");
            CosmosException refused = assertThrows(CosmosException.class, () -> container.patchItem(
                "i1", new PartitionKey("odd"), CosmosPatchOperations.create().set("/v", -1), unless, JsonNode.class));
            assertEquals(412, refused.getStatusCode());
            CosmosPatchItemRequestOptions when = new CosmosPatchItemRequestOptions();
            when.setFilterPredicate("FROM c WHERE c.v = 1");
            assertEquals(-1, container.patchItem("i1", new PartitionKey("odd"),
                CosmosPatchOperations.create().set("/v", -1), when, JsonNode.class).getItem().get("v").asInt());

            // Priority-based execution (a throughput control group of priority
            // Low: the PriorityLevel header or token) and an end-to-end
            // budget: served as usual.
            container.enableLocalThroughputControlGroup(new ThroughputControlGroupConfigBuilder()
                .groupName("background").priorityLevel(PriorityLevel.LOW).build());
            CosmosItemRequestOptions low = new CosmosItemRequestOptions()
                .setCosmosEndToEndOperationLatencyPolicyConfig(
                    new CosmosEndToEndOperationLatencyPolicyConfigBuilder(Duration.ofSeconds(10)).build());
            low.setThroughputControlGroupName("background");
            assertEquals(2, container.readItem("i2", new PartitionKey("even"), low, JsonNode.class)
                .getItem().get("v").asInt());

            // Every item of one partition key deleted, the other's kept.
            assertEquals(200, container.deleteAllItemsByPartitionKey(
                new PartitionKey("even"), new CosmosItemRequestOptions()).getStatusCode());
            List<String> left = container.queryItems("SELECT VALUE c.id FROM c", new CosmosQueryRequestOptions(),
                String.class).stream().sorted().collect(Collectors.toList());
            assertEquals(List.of("i1", "i3", "i5"), left);
            client.getDatabase(db).delete();
        }
    }

    @Test
    void aClientThatOpensItsConnectionsAtBuildTimeServesAtOnce() {
        String db = Emulators.unique("proactive");
        try (CosmosClient setup = Emulators.client()) {
            setup.createDatabase(db);
            setup.getDatabase(db).createContainer("c", "/pk");
            setup.getDatabase(db).getContainer("c").createItem(item("a", "p", 7));
        }
        // The SDK asks for preferred regions with it: the emulator's one.
        try (CosmosClient client = Emulators.builder(Emulators.https())
                .preferredRegions(List.of("South Central US"))
                .openConnectionsAndInitCaches(new CosmosContainerProactiveInitConfigBuilder(
                        List.of(new CosmosContainerIdentity(db, "c")))
                    .setProactiveConnectionRegionsCount(1)
                    .build())
                .buildClient()) {
            Instant built = Instant.now();
            CosmosContainer container = client.getDatabase(db).getContainer("c");
            var read = container.readItem("a", new PartitionKey("p"), JsonNode.class);
            assertEquals(7, read.getItem().get("v").asInt());
            if (Emulators.direct()) {
                // The replica's endpoint (its connections) was opened while
                // the client was built, not by this first read.
                Matcher created = Pattern.compile("\"serviceEndpointStatistics\":\\{[^}]*\"createdTime\":\"([^\"]+)\"")
                    .matcher(read.getDiagnostics().toString());
                assertTrue(created.find(), read.getDiagnostics().toString());
                assertTrue(Instant.parse(created.group(1)).isBefore(built),
                    "opened at " + created.group(1) + ", the client built at " + built);
            }
            client.getDatabase(db).delete();
        }
    }
}
