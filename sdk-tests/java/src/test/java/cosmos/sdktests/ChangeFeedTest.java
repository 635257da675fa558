// The change feed's pull model (queryChangeFeed) on a container of two
// ranges: latest version from the beginning, from now and from a
// continuation, per feed range and per partition key; all versions and
// deletes, with an item that expires through the test clock arriving as a
// delete with timeToLiveExpired; and the latest version in the wire format
// 2021-09-15 (issue 47), as the change feed processor's
// handleLatestVersionChanges reads it, over four ranges.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.implementation.ImplementationBridgeHelpers;
import com.azure.cosmos.models.ChangeFeedOperationType;
import com.azure.cosmos.models.ChangeFeedProcessorItem;
import com.azure.cosmos.models.CosmosChangeFeedRequestOptions;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.FeedRange;
import com.azure.cosmos.models.FeedResponse;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.ThroughputProperties;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ChangeFeedTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static ObjectNode item(String id, String pk, int n) {
        return JSON.createObjectNode().put("id", id).put("pk", pk).put("n", n);
    }

    /** Reads a feed to its current end: the ids, in order, and the continuation. */
    record Read<T>(List<T> items, String continuation) {}

    static <T> Read<T> drain(CosmosContainer items, CosmosChangeFeedRequestOptions options, Class<T> type) {
        List<T> seen = new ArrayList<>();
        String continuation = null;
        for (FeedResponse<T> page : items.queryChangeFeed(options, type).iterableByPage()) {
            seen.addAll(page.getResults());
            continuation = page.getContinuationToken();
        }
        assertNotNull(continuation, "every change feed page carries a continuation");
        return new Read<>(seen, continuation);
    }

    static List<String> ids(List<ObjectNode> nodes) {
        return nodes.stream().map(n -> n.get("id").asText()).collect(Collectors.toList());
    }

    @Test
    void latestVersion() {
        try (Db db = new Db("cf-latest")) {
            CosmosContainer items = db.container("items", 12000);
            List<FeedRange> ranges = items.getFeedRanges();
            assertEquals(2, ranges.size());
            IntStream.range(0, 30).forEach(i -> items.createItem(item("a" + i, "k" + (i % 10), i)));

            Read<ObjectNode> all = drain(items,
                CosmosChangeFeedRequestOptions.createForProcessingFromBeginning(FeedRange.forFullRange()), ObjectNode.class);
            assertEquals(30, all.items().size());
            assertEquals(30, new HashSet<>(ids(all.items())).size());
            assertTrue(all.items().stream().allMatch(n -> n.has("_lsn")), "each change carries _lsn");

            // Each range's feed: disjoint, together everything.
            Set<String> union = new HashSet<>();
            int total = 0;
            for (FeedRange range : ranges) {
                List<String> part = ids(drain(items,
                    CosmosChangeFeedRequestOptions.createForProcessingFromBeginning(range), ObjectNode.class).items());
                assertFalse(part.isEmpty(), "30 items over 10 keys leave no range empty");
                total += part.size();
                union.addAll(part);
            }
            assertEquals(30, total);
            assertEquals(30, union.size());

            // One partition key's feed.
            List<String> k3 = ids(drain(items, CosmosChangeFeedRequestOptions.createForProcessingFromBeginning(
                FeedRange.forLogicalPartition(new PartitionKey("k3"))), ObjectNode.class).items());
            assertEquals(List.of("a3", "a13", "a23"), k3);

            // From "now": nothing yet. Then changes after the continuation:
            // each changed item once, in its latest version; deletes never.
            Read<ObjectNode> now = drain(items,
                CosmosChangeFeedRequestOptions.createForProcessingFromNow(FeedRange.forFullRange()), ObjectNode.class);
            assertEquals(List.of(), now.items());
            items.upsertItem(item("a1", "k1", 100));
            items.upsertItem(item("a1", "k1", 101));
            items.createItem(item("b1", "k2", 0));
            items.deleteItem("a2", new PartitionKey("k2"), new CosmosItemRequestOptions());
            Read<ObjectNode> after = drain(items,
                CosmosChangeFeedRequestOptions.createForProcessingFromContinuation(all.continuation()), ObjectNode.class);
            assertEquals(Set.of("a1", "b1"), new HashSet<>(ids(after.items())));
            assertEquals(2, after.items().size());
            assertEquals(101, after.items().stream().filter(n -> n.get("id").asText().equals("a1")).findFirst()
                .orElseThrow().get("n").asInt());
            Read<ObjectNode> fromNow = drain(items,
                CosmosChangeFeedRequestOptions.createForProcessingFromContinuation(now.continuation()), ObjectNode.class);
            assertEquals(Set.of("a1", "b1"), new HashSet<>(ids(fromNow.items())));
            // And nothing after the last continuation.
            assertEquals(List.of(), drain(items,
                CosmosChangeFeedRequestOptions.createForProcessingFromContinuation(after.continuation()), ObjectNode.class).items());
        }
    }

    /**
     * The latest version in the wire format 2021-09-15. The public options
     * send that header only in all versions and deletes mode; the change
     * feed processor's handleLatestVersionChanges sets it on its latest
     * version requests through this accessor (PartitionProcessorHelper in
     * azure-cosmos), and so does this test, to read as the processor does.
     */
    static CosmosChangeFeedRequestOptions wrapped(CosmosChangeFeedRequestOptions options) {
        return ImplementationBridgeHelpers.CosmosChangeFeedRequestOptionsHelper
            .getCosmosChangeFeedRequestOptionsAccessor()
            .setHeader(options, "x-ms-cosmos-changefeed-wire-format-version", "2021-09-15");
    }

    static String currentId(ChangeFeedProcessorItem item) {
        return item.getCurrent() == null ? null : item.getCurrent().path("id").asText(null);
    }

    @Test
    void latestVersionInTheWireFormatOfTheProcessor() {
        try (Db db = new Db("cf-wire")) {
            CosmosContainer items = db.container("items", 24000);
            List<FeedRange> ranges = items.getFeedRanges();
            assertEquals(4, ranges.size());
            IntStream.range(0, 40).forEach(i -> items.createItem(item("w" + i, "k" + (i % 13), i)));

            // Each range's feed from the beginning: every item once over
            // the four, each with its current version and its metadata.
            Map<String, ChangeFeedProcessorItem> seen = new HashMap<>();
            Map<FeedRange, String> continuations = new HashMap<>();
            for (FeedRange range : ranges) {
                Read<ChangeFeedProcessorItem> read = drain(items,
                    wrapped(CosmosChangeFeedRequestOptions.createForProcessingFromBeginning(range)),
                    ChangeFeedProcessorItem.class);
                continuations.put(range, read.continuation());
                for (ChangeFeedProcessorItem item : read.items()) {
                    assertNotNull(currentId(item), "an item with its current version: " + item);
                    assertTrue(seen.put(currentId(item), item) == null, "once: " + item);
                }
            }
            assertEquals(IntStream.range(0, 40).mapToObj(i -> "w" + i).collect(Collectors.toSet()), seen.keySet());
            for (ChangeFeedProcessorItem item : seen.values()) {
                JsonNode current = item.getCurrent();
                assertEquals("k" + (current.get("n").asInt() % 13), current.get("pk").asText());
                assertNotNull(item.getChangeFeedMetaData(), "metadata: " + item);
                assertEquals(current.get("_lsn").asLong(), item.getChangeFeedMetaData().getLogSequenceNumber());
                assertEquals(current.get("_ts").asLong(),
                    item.getChangeFeedMetaData().getConflictResolutionTimestamp().getEpochSecond());
            }

            // From each range's continuation: a replace as its new version
            // under a later LSN, in the range that holds it, and nothing else.
            items.upsertItem(item("w5", "k5", 500));
            List<ChangeFeedProcessorItem> after = new ArrayList<>();
            for (FeedRange range : ranges) {
                after.addAll(drain(items,
                    wrapped(CosmosChangeFeedRequestOptions.createForProcessingFromContinuation(continuations.get(range))),
                    ChangeFeedProcessorItem.class).items());
            }
            assertEquals(1, after.size(), after.toString());
            assertEquals("w5", currentId(after.get(0)));
            assertEquals(500, after.get(0).getCurrent().get("n").asInt());
            assertTrue(after.get(0).getChangeFeedMetaData().getLogSequenceNumber()
                > seen.get("w5").getChangeFeedMetaData().getLogSequenceNumber());

            // Without the header the same feed stays bare: no current, the
            // item itself with _lsn.
            List<ObjectNode> bare = drain(items,
                CosmosChangeFeedRequestOptions.createForProcessingFromBeginning(FeedRange.forFullRange()),
                ObjectNode.class).items();
            assertEquals(40, bare.size());
            assertTrue(bare.stream().allMatch(n -> !n.has("current") && n.has("id") && n.has("_lsn")), bare.toString());
        }
    }

    @Test
    void allVersionsAndDeletesWithATtlExpiry() throws Exception {
        try (Db db = new Db("cf-avad")) {
            CosmosContainerProperties properties = new CosmosContainerProperties("items", "/pk");
            properties.setDefaultTimeToLiveInSeconds(-1);
            db.database.createContainer(properties, ThroughputProperties.createManualThroughput(12000));
            CosmosContainer items = db.database.getContainer("items");

            Read<ChangeFeedProcessorItem> start = drain(items,
                CosmosChangeFeedRequestOptions.createForProcessingFromNow(FeedRange.forFullRange()).allVersionsAndDeletes(),
                ChangeFeedProcessorItem.class);
            assertEquals(List.of(), start.items());

            items.createItem(item("x", "p", 1).put("ttl", 10));
            items.replaceItem(item("x", "p", 2).put("ttl", 10), "x", new PartitionKey("p"), new CosmosItemRequestOptions());
            items.createItem(item("y", "q", 1));
            items.deleteItem("y", new PartitionKey("q"), new CosmosItemRequestOptions());
            long written = db.emulator.now();
            db.emulator.advance(10); // x expires now: _ts + 10
            db.emulator.purge(); // returns once x is purged (the background purge may have been first)

            List<ChangeFeedProcessorItem> changes = drain(items,
                CosmosChangeFeedRequestOptions.createForProcessingFromContinuation(start.continuation()).allVersionsAndDeletes(),
                ChangeFeedProcessorItem.class).items();
            List<String> seen = new ArrayList<>();
            for (ChangeFeedProcessorItem change : changes) {
                String id = change.getCurrent() != null && change.getCurrent().has("id")
                    ? change.getCurrent().get("id").asText()
                    : change.getPrevious() != null && change.getPrevious().has("id")
                        ? change.getPrevious().get("id").asText()
                        : change.toJsonNode().at("/metadata/id").asText();
                seen.add(change.getChangeFeedMetaData().getOperationType() + " " + id
                    + (change.getChangeFeedMetaData().isTimeToLiveExpired() ? " ttl" : ""));
            }
            // x and y hash to either range: compare each item's own order.
            List<String> ofX = seen.stream().filter(s -> s.contains(" x")).collect(Collectors.toList());
            List<String> ofY = seen.stream().filter(s -> s.contains(" y")).collect(Collectors.toList());
            assertEquals(List.of(ChangeFeedOperationType.CREATE + " x", ChangeFeedOperationType.REPLACE + " x",
                ChangeFeedOperationType.DELETE + " x ttl"), ofX, seen.toString());
            assertEquals(List.of(ChangeFeedOperationType.CREATE + " y", ChangeFeedOperationType.DELETE + " y"), ofY,
                seen.toString());
            ChangeFeedProcessorItem expiry = changes.stream()
                .filter(c -> c.getChangeFeedMetaData().isTimeToLiveExpired()).findFirst().orElseThrow();
            assertTrue(expiry.getChangeFeedMetaData().getConflictResolutionTimestamp().getEpochSecond() >= written + 10,
                "the TTL delete is not before the expiry instant");
            // The LSNs grow along each item's history.
            long previous = 0;
            for (ChangeFeedProcessorItem c : changes) {
                if (c.toString().contains("\"x\"")) {
                    assertTrue(c.getChangeFeedMetaData().getLogSequenceNumber() > previous);
                    previous = c.getChangeFeedMetaData().getLogSequenceNumber();
                }
            }
        }
    }
}
