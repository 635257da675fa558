// Queries the Java SDK's own pipeline runs across partition key ranges
// (it asks the gateway for a query plan, then queries each range and
// merges): ORDER BY, aggregates, DISTINCT, GROUP BY, OFFSET LIMIT, TOP, and
// continuation tokens (byPage, resumed from a token in a new iterator),
// before and after a split, on a container of 18,000 RU/s (three ranges,
// docs/src/ranges.md) split into four. Expectations are computed here from
// the items written, not read from the emulator.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class QueriesTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final int N = 60;
    static Db db;
    static CosmosContainer items;

    /** Item i: pk p(i % 7), n = i, cat c(i % 3), name a string not in n's order. */
    static ObjectNode item(int i) {
        return JSON.createObjectNode()
            .put("id", String.format("i%02d", i))
            .put("pk", "p" + (i % 7))
            .put("n", i)
            .put("cat", "c" + (i % 3))
            .put("name", "name-" + ((i * 37) % N + 1000));
    }

    @BeforeAll
    static void container() {
        db = new Db("queries");
        items = db.container("items", 18000);
        IntStream.range(0, N).forEach(i -> items.createItem(item(i)));
    }

    @AfterAll
    static void drop() {
        db.close();
    }

    static <T> List<T> all(String sql, Class<T> type) {
        return items.queryItems(sql, new CosmosQueryRequestOptions(), type).stream().collect(Collectors.toList());
    }

    /** Every page of a query of {@code pageSize}, resuming from each page's continuation in a new iterator. */
    static List<JsonNode> resumedPageByPage(String sql, int pageSize) {
        List<JsonNode> seen = new ArrayList<>();
        String continuation = null;
        int pages = 0;
        do {
            FeedResponse<JsonNode> page = items.queryItems(sql, new CosmosQueryRequestOptions(), JsonNode.class)
                .iterableByPage(continuation, pageSize).iterator().next();
            assertTrue(page.getResults().size() <= pageSize, "a page of " + page.getResults().size());
            seen.addAll(page.getResults());
            continuation = page.getContinuationToken();
            assertTrue(++pages <= 10 * N, "no end of pages");
        } while (continuation != null);
        return seen;
    }

    @Test
    @Order(1)
    void theContainerHasThreeRanges() {
        assertEquals(3, items.getFeedRanges().size());
    }

    @Test
    @Order(2)
    void orderByAcrossRanges() {
        List<Integer> desc = all("SELECT VALUE c.n FROM c ORDER BY c.n DESC", Integer.class);
        assertEquals(IntStream.range(0, N).map(i -> N - 1 - i).boxed().collect(Collectors.toList()), desc);
        List<String> names = all("SELECT * FROM c ORDER BY c.name", JsonNode.class).stream()
            .map(j -> j.get("name").asText()).collect(Collectors.toList());
        List<String> expected = IntStream.range(0, N).mapToObj(i -> item(i).get("name").asText()).sorted()
            .collect(Collectors.toList());
        assertEquals(expected, names);
        List<Integer> filtered = all("SELECT VALUE c.n FROM c WHERE c.cat = 'c1' ORDER BY c.n", Integer.class);
        assertEquals(IntStream.range(0, N).filter(i -> i % 3 == 1).boxed().collect(Collectors.toList()), filtered);
    }

    @Test
    @Order(3)
    void aggregatesAcrossRanges() {
        assertEquals(List.of(N), all("SELECT VALUE COUNT(1) FROM c", Integer.class));
        // The SDK adds the ranges' sums up as doubles.
        assertEquals(List.of(N * (N - 1) / 2.0), all("SELECT VALUE SUM(c.n) FROM c", Double.class));
        assertEquals(List.of(0), all("SELECT VALUE MIN(c.n) FROM c", Integer.class));
        assertEquals(List.of(N - 1), all("SELECT VALUE MAX(c.n) FROM c", Integer.class));
        assertEquals(List.of((N - 1) / 2.0), all("SELECT VALUE AVG(c.n) FROM c", Double.class));
        assertEquals(List.of(20), all("SELECT VALUE COUNT(1) FROM c WHERE c.cat = 'c2'", Integer.class));
        JsonNode several = all("SELECT COUNT(1) AS n, MAX(c.name) AS top FROM c", JsonNode.class).get(0);
        assertEquals(N, several.get("n").asInt());
        assertEquals("name-" + (1000 + N - 1), several.get("top").asText());
    }

    @Test
    @Order(4)
    void distinctAndGroupBy() {
        List<String> cats = all("SELECT DISTINCT VALUE c.cat FROM c", String.class);
        assertEquals(List.of("c0", "c1", "c2"), cats.stream().sorted().collect(Collectors.toList()));
        assertEquals(3, cats.size(), "each once: " + cats);
        List<String> ordered = all("SELECT DISTINCT VALUE c.pk FROM c ORDER BY c.pk", String.class);
        assertEquals(IntStream.range(0, 7).mapToObj(i -> "p" + i).collect(Collectors.toList()), ordered);

        Map<String, int[]> expected = new TreeMap<>();
        for (int i = 0; i < N; i++) {
            int[] acc = expected.computeIfAbsent("c" + (i % 3), k -> new int[2]);
            acc[0]++;
            acc[1] += i;
        }
        Map<String, String> grouped = new TreeMap<>();
        for (JsonNode row : all("SELECT c.cat, COUNT(1) AS count, SUM(c.n) AS total FROM c GROUP BY c.cat", JsonNode.class)) {
            grouped.put(row.get("cat").asText(), row.get("count").asInt() + "/" + row.get("total").asInt());
        }
        Map<String, String> want = new TreeMap<>();
        expected.forEach((k, v) -> want.put(k, v[0] + "/" + v[1]));
        assertEquals(want, grouped);
    }

    @Test
    @Order(5)
    void offsetLimitAndTop() {
        assertEquals(IntStream.range(10, 25).boxed().collect(Collectors.toList()),
            all("SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 10 LIMIT 15", Integer.class));
        assertEquals(List.of(59, 58, 57), all("SELECT TOP 3 VALUE c.n FROM c ORDER BY c.n DESC", Integer.class));
        assertEquals(5, all("SELECT TOP 5 * FROM c", JsonNode.class).size());
        assertEquals(List.of(), all("SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 100 LIMIT 5", Integer.class));
    }

    @Test
    @Order(6)
    void continuationTokens() {
        // ORDER BY: every item once, in order, page after page.
        List<Integer> ordered = resumedPageByPage("SELECT * FROM c ORDER BY c.n", 7).stream()
            .map(j -> j.get("n").asInt()).collect(Collectors.toList());
        assertEquals(IntStream.range(0, N).boxed().collect(Collectors.toList()), ordered);
        // No ORDER BY: every item once.
        List<String> plain = resumedPageByPage("SELECT * FROM c WHERE c.n >= 0", 8).stream()
            .map(j -> j.get("id").asText()).collect(Collectors.toList());
        assertEquals(N, plain.size());
        assertEquals(N, new HashSet<>(plain).size());
        // OFFSET LIMIT resumed.
        List<Integer> window = resumedPageByPage("SELECT * FROM c ORDER BY c.n OFFSET 5 LIMIT 20", 6).stream()
            .map(j -> j.get("n").asInt()).collect(Collectors.toList());
        assertEquals(IntStream.range(5, 25).boxed().collect(Collectors.toList()), window);
    }

    @Test
    @Order(7)
    void aSplitBetweenPagesLosesAndRepeatsNothing() throws Exception {
        String sql = "SELECT * FROM c ORDER BY c.n";
        FeedResponse<JsonNode> first = items.queryItems(sql, new CosmosQueryRequestOptions(), JsonNode.class)
            .iterableByPage(10).iterator().next();
        String continuation = first.getContinuationToken();
        assertNotNull(continuation);
        List<Integer> seen = first.getResults().stream().map(j -> j.get("n").asInt()).collect(Collectors.toList());

        List<String> children = db.emulator.split(db.name, "items", "1");
        assertEquals(List.of("3", "4"), children);

        for (FeedResponse<JsonNode> page : items.queryItems(sql, new CosmosQueryRequestOptions(), JsonNode.class)
                .iterableByPage(continuation, 10)) {
            page.getResults().forEach(j -> seen.add(j.get("n").asInt()));
        }
        assertEquals(IntStream.range(0, N).boxed().collect(Collectors.toList()), seen);
        assertEquals(4, items.getFeedRanges().size());
        // And every query of this class again, on four ranges.
        assertEquals(List.of(N), all("SELECT VALUE COUNT(1) FROM c", Integer.class));
        assertEquals(IntStream.range(0, N).boxed().sorted(Comparator.reverseOrder()).collect(Collectors.toList()),
            all("SELECT VALUE c.n FROM c ORDER BY c.n DESC", Integer.class));
        List<String> plain = resumedPageByPage("SELECT * FROM c", 9).stream()
            .map(j -> j.get("id").asText()).collect(Collectors.toList());
        assertEquals(N, new HashSet<>(plain).size());
        assertEquals(N, plain.size());
    }
}
