// The documentation's TTL example tables E1-E3 (docs/src/ttl.md, the
// conformance cases in fixtures/cases/1-examples.toml) through the SDK:
// each row's container defaultTimeToLive and item ttl ("null" is an SDK
// null: no property at all), and its documented outcome, checked on the
// point read, a query, the read feed and COUNT the second before and at
// the expiry instant, moving the test clock (nothing sleeps).
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TtlTablesTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static Db db;

    @BeforeAll
    static void database() {
        db = new Db("ttl-tables");
    }

    @AfterAll
    static void drop() {
        db.close();
    }

    @ParameterizedTest(name = "{0}: defaultTtl {1}, ttl {2}: {3}")
    @CsvSource({
        // case, container defaultTtl, item ttl, expires after (seconds, or never)
        "E1.1, null, null, never",
        "E1.2, null, -1, never",
        "E1.3, null, 2000, never",
        "E2.1, -1, null, never",
        "E2.2, -1, -1, never",
        "E2.3, -1, 2000, 2000",
        "E3.1, 1000, null, 1000",
        "E3.2, 1000, -1, never",
        "E3.3, 1000, 2000, 2000",
    })
    void exampleTable(String id, String defaultTtl, String itemTtl, String expiresAfter) throws Exception {
        CosmosContainerProperties properties = new CosmosContainerProperties("c" + id.replace(".", "-"), "/pk");
        if (!defaultTtl.equals("null")) {
            properties.setDefaultTimeToLiveInSeconds(Integer.parseInt(defaultTtl));
        }
        db.database.createContainer(properties);
        CosmosContainer items = db.database.getContainer(properties.getId());
        assertEquals(defaultTtl.equals("null") ? null : Integer.valueOf(defaultTtl),
            items.read().getProperties().getDefaultTimeToLiveInSeconds());

        ObjectNode item = JSON.createObjectNode().put("id", "a").put("pk", "p");
        if (!itemTtl.equals("null")) {
            item.put("ttl", Integer.parseInt(itemTtl));
        }
        long ts = items.createItem(item).getItem().get("_ts").asLong();
        assertEquals(db.emulator.now(), ts);
        assertVisible(items, true, id + " at _ts");

        if (expiresAfter.equals("never")) {
            db.emulator.advance(3000);
            assertVisible(items, true, id + " 3000 s later");
            return;
        }
        long life = Long.parseLong(expiresAfter);
        db.emulator.advance(ts + life - 1 - db.emulator.now());
        assertVisible(items, true, id + " the second before _ts + " + life);
        db.emulator.advance(1);
        assertVisible(items, false, id + " at _ts + " + life);
        // Purged, and still gone.
        db.emulator.purge();
        assertVisible(items, false, id + " after the purge");
    }

    static void assertVisible(CosmosContainer items, boolean visible, String when) {
        if (visible) {
            assertEquals("a", items.readItem("a", new PartitionKey("p"), ObjectNode.class).getItem().get("id").asText(), when);
        } else {
            CosmosException gone = assertThrows(CosmosException.class,
                () -> items.readItem("a", new PartitionKey("p"), ObjectNode.class), when);
            assertEquals(404, gone.getStatusCode(), when);
        }
        List<String> expected = visible ? List.of("a") : List.of();
        List<String> queried = items.queryItems("SELECT VALUE c.id FROM c", new CosmosQueryRequestOptions(), String.class)
            .stream().collect(Collectors.toList());
        assertEquals(expected, queried, when + ": query");
        List<String> feed = items.readAllItems(new PartitionKey("p"), ObjectNode.class).stream()
            .map(i -> i.get("id").asText()).collect(Collectors.toList());
        assertEquals(expected, feed, when + ": read feed");
        long count = items.queryItems("SELECT VALUE COUNT(1) FROM c", new CosmosQueryRequestOptions(), Long.class)
            .stream().findFirst().orElseThrow();
        assertEquals(visible ? 1 : 0, count, when + ": COUNT");
    }
}
