// A range split (POST /_emulator/split, docs/src/ranges.md) while the
// SDK is in the middle of a feed: one iterator, pages of five, and the
// split between two pages. The SDK still holds the parent range (its
// routing map and, in Direct mode, the parent's replicas), so its next page
// is answered 410/1002 (PartitionKeyRangeGone); it re-reads the ranges and
// goes on from its continuation on the children. Every item must come back
// exactly once. (QueriesTest resumes from a token in a new iterator after
// a split; here the iterator that saw the parent goes on.)
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

    @Test
    void aCrossPartitionQueryGoesOnAfterItsRangeSplits() throws Exception {
        try (Db db = new Db("split-query")) {
            CosmosContainer items = filled(db);
            Iterator<FeedResponse<JsonNode>> pages = items
                .queryItems("SELECT * FROM c", new CosmosQueryRequestOptions(), JsonNode.class)
                .iterableByPage(PAGE)
                .iterator();
            List<String> seen = new ArrayList<>(ids(pages.next()));
            assertEquals(PAGE, seen.size(), "the first page, from the one range");

            assertEquals(List.of("1", "2"), db.emulator.split(db.name, "items", "0"));
            int more = 0;
            while (pages.hasNext()) {
                seen.addAll(ids(pages.next()));
                more++;
            }
            assertTrue(more >= 2, "the rest came in pages: " + more);
            assertEveryItemOnce(seen);
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
            while (pages.hasNext()) {
                seen.addAll(ids(pages.next()));
            }
            assertEveryItemOnce(seen);
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

    private static void assertEveryItemOnce(List<String> seen) {
        assertEquals(N, seen.size(), "no item twice: " + seen);
        assertEquals(IntStream.range(0, N).mapToObj(SplitUnderFeedTest::id).collect(Collectors.toCollection(TreeSet::new)),
            new TreeSet<>(seen), "every item: " + seen);
    }
}
