// A range split (POST /_emulator/split, docs/src/ranges.md) in the middle
// of a feed, pages of five: a change feed read's iterator goes on across
// the split, and a query goes on from its first page's continuation. The
// SDK still holds the parent range (its routing map and, in Direct mode,
// the parent's replicas), so its next request is answered 410/1002
// (PartitionKeyRangeGone), which the diagnostics must show; it re-reads
// the ranges and goes on from its continuation on the children (a new
// query's pipeline reads the ranges first, so it goes to the children
// straight away). Every item must come back exactly once. (QueriesTest resumes an ORDER BY query on a
// container of three ranges; this one checks that the SDK met the split.)
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.models.CosmosChangeFeedRequestOptions;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedRange;
import com.azure.cosmos.models.FeedResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SplitUnderFeedTest {
    private static final int N = 40;
    private static final int PAGE = 5;

    /**
     * A query cannot be split under a live iterator: the SDK's pipeline
     * fetches every page of a range ahead of the application, whatever the
     * prefetch asked for (Paginator: Flux.generate into flatMapSequential,
     * which subscribes the next page as each one completes), so all of them
     * came before the split. The query goes on from the first page's
     * continuation instead, on the same client, which still holds the
     * parent range in its caches (and in Direct mode its replicas).
     */
    @Test
    void aCrossPartitionQueryGoesOnAfterItsRangeSplits() throws Exception {
        try (Db db = new Db("split-query")) {
            CosmosContainer items = filled(db);
            String sql = "SELECT * FROM c";
            FeedResponse<JsonNode> first = items.queryItems(sql, new CosmosQueryRequestOptions(), JsonNode.class)
                .iterableByPage(PAGE).iterator().next();
            List<String> seen = new ArrayList<>(ids(first));
            assertEquals(PAGE, seen.size(), "the first page, from the one range");
            String continuation = first.getContinuationToken();

            assertEquals(List.of("1", "2"), db.emulator.split(db.name, "items", "0"));
            int more = 0;
            StringBuilder diagnostics = new StringBuilder();
            for (FeedResponse<JsonNode> page : items.queryItems(sql, new CosmosQueryRequestOptions(), JsonNode.class)
                    .iterableByPage(continuation, PAGE)) {
                seen.addAll(ids(page));
                diagnostics.append(page.getCosmosDiagnostics()).append('\n');
                more++;
            }
            assertTrue(more >= 2, "the rest came in pages: " + more);
            assertEveryItemOnce(seen);
            // From the children, each named in the query metrics: the SDK
            // took up the new ranges before sending (a new query reads
            // them), so no request met the parent here.
            String text = diagnostics.toString();
            assertTrue(text.contains("pkrId:1\"") && text.contains("pkrId:2\""), text);
            assertTrue(!text.contains("pkrId:0\""), text);
            assertEquals(2, items.getFeedRanges().size());
        }
    }

    @Test
    void aChangeFeedReadGoesOnAfterItsRangeSplits() throws Exception {
        try (Db db = new Db("split-feed")) {
            CosmosContainer items = filled(db);
            CosmosChangeFeedRequestOptions options = CosmosChangeFeedRequestOptions
                .createForProcessingFromBeginning(FeedRange.forFullRange())
                .setMaxItemCount(PAGE);
            Iterator<FeedResponse<JsonNode>> pages = items
                .queryChangeFeed(options, JsonNode.class)
                .iterableByPage()
                .iterator();
            List<String> seen = new ArrayList<>(ids(pages.next()));
            assertEquals(PAGE, seen.size(), "the first page, from the one range");

            assertEquals(List.of("1", "2"), db.emulator.split(db.name, "items", "0"));
            // The pull model's iterator ends when every range has answered
            // 304 (nothing new) once.
            StringBuilder diagnostics = new StringBuilder();
            while (pages.hasNext()) {
                FeedResponse<JsonNode> page = pages.next();
                seen.addAll(ids(page));
                diagnostics.append(page.getCosmosDiagnostics()).append('\n');
            }
            assertEveryItemOnce(seen);
            assertSawTheParentGone(diagnostics.toString());
        }
    }

    /** A container of 400 RU/s (one range, "0") holding N items, each its own partition key. */
    private static CosmosContainer filled(Db db) {
        CosmosContainer items = db.container("items", 400);
        for (int i = 0; i < N; i++) {
            items.createItem(JsonNodeFactory.instance.objectNode().put("id", id(i)).put("pk", "pk-" + i));
        }
        assertEquals(1, items.getFeedRanges().size());
        return items;
    }

    private static String id(int i) {
        return String.format("item-%02d", i);
    }

    private static List<String> ids(FeedResponse<JsonNode> page) {
        return page.getResults().stream().map(j -> j.get("id").asText()).collect(Collectors.toList());
    }

    /** The SDK met the split: the parent range answered 410/1002 once. */
    private static void assertSawTheParentGone(String diagnostics) {
        assertTrue(diagnostics.contains("410") && diagnostics.contains("1002"), diagnostics);
    }

    private static void assertEveryItemOnce(List<String> seen) {
        assertEquals(N, seen.size(), "no item twice: " + seen);
        assertEquals(IntStream.range(0, N).mapToObj(SplitUnderFeedTest::id).collect(Collectors.toCollection(TreeSet::new)),
            new TreeSet<>(seen), "every item: " + seen);
    }
}
