// Hierarchical partition keys (MultiHash, /tenant /user /session): items
// addressed by the full key built with PartitionKeyBuilder, queries scoped
// to a prefix of one or two levels, and refusals of incomplete keys.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.PartitionKeyBuilder;
import com.azure.cosmos.models.PartitionKeyDefinition;
import com.azure.cosmos.models.PartitionKeyDefinitionVersion;
import com.azure.cosmos.models.PartitionKind;
import com.azure.cosmos.models.ThroughputProperties;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class HierarchicalKeysTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static PartitionKey key(String... parts) {
        PartitionKeyBuilder builder = new PartitionKeyBuilder();
        for (String part : parts) {
            builder.add(part);
        }
        return builder.build();
    }

    List<String> ids(CosmosContainer items, PartitionKey scope) {
        CosmosQueryRequestOptions options = new CosmosQueryRequestOptions();
        if (scope != null) {
            options.setPartitionKey(scope);
        }
        return items.queryItems("SELECT VALUE c.id FROM c", options, String.class).stream().sorted()
            .collect(Collectors.toList());
    }

    @Test
    void multiHashKeys() {
        try (Db db = new Db("hpk")) {
            PartitionKeyDefinition definition = new PartitionKeyDefinition();
            definition.setKind(PartitionKind.MULTI_HASH);
            definition.setVersion(PartitionKeyDefinitionVersion.V2);
            definition.setPaths(List.of("/tenant", "/user", "/session"));
            // Two ranges, so that a prefix's items may lie in either.
            db.database.createContainer(new CosmosContainerProperties("items", definition),
                ThroughputProperties.createManualThroughput(12000));
            CosmosContainer items = db.database.getContainer("items");
            CosmosContainerProperties read = items.read().getProperties();
            assertEquals(PartitionKind.MULTI_HASH, read.getPartitionKeyDefinition().getKind());
            assertEquals(List.of("/tenant", "/user", "/session"), read.getPartitionKeyDefinition().getPaths());

            String[][] rows = {
                {"1", "t1", "u1", "s1"}, {"2", "t1", "u1", "s2"}, {"3", "t1", "u2", "s1"},
                {"4", "t2", "u1", "s1"}, {"5", "t2", "u3", "s9"}, {"6", "t3", "u1", "s1"},
            };
            for (String[] r : rows) {
                ObjectNode item = JSON.createObjectNode().put("id", r[0]).put("tenant", r[1]).put("user", r[2]).put("session", r[3]);
                assertEquals(201, items.createItem(item, key(r[1], r[2], r[3]), new CosmosItemRequestOptions()).getStatusCode());
            }

            assertEquals("3", items.readItem("3", key("t1", "u2", "s1"), ObjectNode.class).getItem().get("id").asText());
            CosmosException wrong = assertThrows(CosmosException.class,
                () -> items.readItem("3", key("t1", "u1", "s1"), ObjectNode.class));
            assertEquals(404, wrong.getStatusCode());

            assertEquals(List.of("1", "2", "3"), ids(items, key("t1")));
            assertEquals(List.of("1", "2"), ids(items, key("t1", "u1")));
            assertEquals(List.of("4", "5"), ids(items, key("t2")));
            assertEquals(List.of("2"), ids(items, key("t1", "u1", "s2")));
            assertEquals(List.of("1", "2", "3", "4", "5", "6"), ids(items, null));

            // A point operation needs the full key.
            CosmosException partial = assertThrows(CosmosException.class,
                () -> items.readItem("1", key("t1"), ObjectNode.class));
            assertEquals(400, partial.getStatusCode());

            assertEquals(204, items.deleteItem("1", key("t1", "u1", "s1"), new CosmosItemRequestOptions()).getStatusCode());
            assertEquals(List.of("2", "3"), ids(items, key("t1")));
        }
    }
}
