// The change feed processor (ChangeFeedProcessorBuilder) as teams run it:
// a monitored container of several ranges, a lease container partitioned
// on /id, two instances with different host names. Leases balance across
// them (each lease document's Owner), every change is delivered at least
// once, a stopped instance's leases are taken over, a split of the
// monitored container while they run loses no change, in all versions
// and deletes mode a TTL expiry arrives as a delete, and the estimator
// counts exactly the pending changes. The current API,
// handleLatestVersionChanges, reads the latest version in the change feed's
// wire format 2021-09-15: each change a ChangeFeedProcessorItem with its
// current version and its metadata (issue 47).
//
// Short lease intervals and poll delay keep it quick; every wait is a
// bounded poll of what the processors delivered or the leases say.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.ChangeFeedProcessor;
import com.azure.cosmos.ChangeFeedProcessorBuilder;
import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosAsyncDatabase;
import com.azure.cosmos.models.ChangeFeedOperationType;
import com.azure.cosmos.models.ChangeFeedProcessorItem;
import com.azure.cosmos.models.ChangeFeedProcessorOptions;
import com.azure.cosmos.models.ChangeFeedProcessorState;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.ThroughputProperties;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ChangeFeedProcessorTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Duration WAIT = Duration.ofSeconds(60);

    Emulator emulator;
    CosmosAsyncClient client;
    CosmosAsyncDatabase database;
    String databaseName;
    final List<ChangeFeedProcessor> running = new ArrayList<>();
    /** Every id each host was handed, in order (repeats kept). */
    final Map<String, List<String>> delivered = new ConcurrentHashMap<>();
    /** Once set, handlers fail: nothing handled after it is checkpointed. */
    volatile boolean frozen;

    @BeforeEach
    void database() {
        emulator = Emulators.https();
        client = Emulators.asyncClient();
        databaseName = Emulators.unique("cfp");
        client.createDatabase(databaseName).block();
        database = client.getDatabase(databaseName);
    }

    @AfterEach
    void drop() {
        for (ChangeFeedProcessor processor : running) {
            if (processor.isStarted()) {
                processor.stop().block(Duration.ofSeconds(30));
            }
        }
        database.delete().block();
        client.close();
    }

    CosmosAsyncContainer monitored(int throughput, Integer defaultTtl) {
        CosmosContainerProperties properties = new CosmosContainerProperties("monitored", "/pk");
        properties.setDefaultTimeToLiveInSeconds(defaultTtl);
        database.createContainer(properties, ThroughputProperties.createManualThroughput(throughput)).block();
        return database.getContainer("monitored");
    }

    CosmosAsyncContainer leases() {
        database.createContainer("leases", "/id").block();
        return database.getContainer("leases");
    }

    static ChangeFeedProcessorOptions quick() {
        return new ChangeFeedProcessorOptions()
            .setLeaseRenewInterval(Duration.ofMillis(500))
            .setLeaseAcquireInterval(Duration.ofMillis(500))
            .setLeaseExpirationInterval(Duration.ofSeconds(3))
            .setFeedPollDelay(Duration.ofMillis(100))
            .setMaxItemCount(20)
            .setStartFromBeginning(true);
    }

    ChangeFeedProcessor latestVersion(String host, CosmosAsyncContainer feed, CosmosAsyncContainer leases) {
        delivered.putIfAbsent(host, Collections.synchronizedList(new ArrayList<>()));
        ChangeFeedProcessor processor = new ChangeFeedProcessorBuilder()
            .hostName(host)
            .feedContainer(feed)
            .leaseContainer(leases)
            .options(quick())
            .handleChanges((List<JsonNode> docs) -> {
                if (frozen) {
                    throw new IllegalStateException("frozen: not handled, so not checkpointed");
                }
                docs.forEach(d -> delivered.get(host).add(d.get("id").asText()));
            })
            .buildChangeFeedProcessor();
        running.add(processor);
        return processor;
    }

    static void waitFor(String what, BooleanSupplier condition) {
        waitFor(what, condition, () -> "");
    }

    static void waitFor(String what, BooleanSupplier condition, Supplier<String> state) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + WAIT + ": " + what + " " + state.get());
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    Set<String> allDelivered() {
        return delivered.values().stream().flatMap(l -> {
            synchronized (l) {
                return new ArrayList<>(l).stream();
            }
        }).collect(Collectors.toSet());
    }

    /** The lease documents: those with a LeaseToken (not the store's .info and .lock). */
    static List<JsonNode> leaseDocuments(CosmosAsyncContainer leases) {
        List<JsonNode> docs = new ArrayList<>();
        leases.queryItems("SELECT * FROM c", new CosmosQueryRequestOptions(), JsonNode.class).toIterable()
            .forEach(doc -> {
                if (doc.hasNonNull("LeaseToken")) {
                    docs.add(doc);
                }
            });
        return docs;
    }

    /** Each lease's Owner, by lease token. */
    static Map<String, String> owners(CosmosAsyncContainer leases) {
        Map<String, String> owners = new TreeMap<>();
        leaseDocuments(leases).forEach(doc -> owners.put(doc.get("LeaseToken").asText(), doc.path("Owner").asText(null)));
        return owners;
    }

    static Map<String, Long> leasesPerOwner(Map<String, String> owners) {
        return owners.values().stream().filter(o -> o != null)
            .collect(Collectors.groupingBy(o -> o, TreeMap::new, Collectors.counting()));
    }

    static ObjectNode item(String id, String pk) {
        return JSON.createObjectNode().put("id", id).put("pk", pk);
    }

    void write(CosmosAsyncContainer feed, String prefix, int count) {
        IntStream.range(0, count).forEach(i -> feed.createItem(item(prefix + i, "k" + (i % 17))).block());
    }

    static Set<String> expected(String prefix, int count) {
        return IntStream.range(0, count).mapToObj(i -> prefix + i).collect(Collectors.toSet());
    }

    @Test
    void twoHostsBalanceTheLeasesAndOneTakesOverWhenTheOtherStops() {
        CosmosAsyncContainer feed = monitored(24000, null); // four ranges
        CosmosAsyncContainer leases = leases();
        ChangeFeedProcessor a = latestVersion("host-a", feed, leases);
        ChangeFeedProcessor b = latestVersion("host-b", feed, leases);
        a.start().block();
        b.start().block();
        write(feed, "one-", 80);

        waitFor("every change delivered", () -> allDelivered().containsAll(expected("one-", 80)),
            () -> "missing " + expectedMissing("one-", 80));
        waitFor("four leases, two per host", () -> {
            Map<String, String> owners = owners(leases);
            Map<String, Long> per = leasesPerOwner(owners);
            return owners.size() == 4 && per.getOrDefault("host-a", 0L) == 2 && per.getOrDefault("host-b", 0L) == 2;
        }, () -> owners(leases).toString());
        assertEquals(Set.of("0", "1", "2", "3"), owners(leases).keySet());
        // Balanced, each host reads its own ranges: what follows reaches
        // both (17 keys over four ranges). A change may reach both hosts
        // while a lease moves (delivery is at least once), so no test of
        // disjointness.
        int before = delivered.get("host-a").size();
        int beforeB = delivered.get("host-b").size();
        write(feed, "mid-", 40);
        waitFor("the balanced hosts deliver what follows", () -> allDelivered().containsAll(expected("mid-", 40)),
            () -> "missing " + expectedMissing("mid-", 40));
        assertTrue(delivered.get("host-a").size() > before && delivered.get("host-b").size() > beforeB, delivered.toString());

        a.stop().block();
        waitFor("host-b owns every lease", () -> leasesPerOwner(owners(leases)).equals(Map.of("host-b", 4L)),
            () -> owners(leases).toString());
        write(feed, "two-", 40);
        waitFor("host-b delivers what follows", () -> delivered.get("host-b").containsAll(expected("two-", 40)));
    }

    Set<String> expectedMissing(String prefix, int count) {
        Set<String> missing = expected(prefix, count);
        missing.removeAll(allDelivered());
        return missing;
    }

    @Test
    void aSplitWhileTheProcessorsRunLosesNoChange() throws Exception {
        CosmosAsyncContainer feed = monitored(12000, null); // two ranges
        CosmosAsyncContainer leases = leases();
        ChangeFeedProcessor a = latestVersion("host-a", feed, leases);
        ChangeFeedProcessor b = latestVersion("host-b", feed, leases);
        a.start().block();
        b.start().block();
        write(feed, "before-", 60);
        waitFor("the changes before the split", () -> allDelivered().containsAll(expected("before-", 60)),
            () -> "missing " + expectedMissing("before-", 60));

        // Split range 0 while both run, with changes on either side of it.
        write(feed, "around-", 20);
        assertEquals(List.of("2", "3"), emulator.split(databaseName, "monitored", "0"));
        write(feed, "after-", 60);

        waitFor("every change after the split", () -> allDelivered().containsAll(expected("after-", 60))
            && allDelivered().containsAll(expected("around-", 20)),
            () -> "missing " + expectedMissing("after-", 60) + expectedMissing("around-", 20) + " leases " + owners(leases));
        waitFor("the parent's lease replaced by its children's, all owned", () -> {
            Map<String, String> owners = owners(leases);
            return owners.keySet().equals(Set.of("1", "2", "3")) && owners.values().stream().allMatch(o -> o != null);
        }, () -> owners(leases).toString());
    }

    /**
     * handleLatestVersionChanges (the API that replaces handleChanges): two
     * hosts on one lease container over four ranges. Every change reaches a
     * handler as an item with its current version and its metadata (the LSN
     * the item carries as _lsn, its write time as crts), and a replace
     * arrives as the new version under a later LSN.
     */
    @Test
    void latestVersionChangesDeliverEachItemWithItsCurrentVersionAndMetadata() {
        CosmosAsyncContainer feed = monitored(24000, null); // four ranges
        CosmosAsyncContainer leases = leases();
        /** What each host was handed, as JSON (repeats kept). */
        Map<String, List<JsonNode>> handed = new ConcurrentHashMap<>();
        for (String host : List.of("host-a", "host-b")) {
            List<JsonNode> mine = Collections.synchronizedList(new ArrayList<>());
            handed.put(host, mine);
            ChangeFeedProcessor processor = new ChangeFeedProcessorBuilder()
                .hostName(host)
                .feedContainer(feed)
                .leaseContainer(leases)
                .options(quick())
                .handleLatestVersionChanges((List<ChangeFeedProcessorItem> items) -> items.forEach(item -> {
                    ObjectNode seen = JSON.createObjectNode();
                    seen.set("current", item.getCurrent());
                    seen.set("metadata", item.getChangeFeedMetaData() == null ? null : JSON.createObjectNode()
                        .put("lsn", item.getChangeFeedMetaData().getLogSequenceNumber())
                        .put("crts", item.getChangeFeedMetaData().getConflictResolutionTimestamp().getEpochSecond()));
                    mine.add(seen);
                }))
                .buildChangeFeedProcessor();
            running.add(processor);
            processor.start().block();
        }
        Supplier<List<JsonNode>> all = () -> handed.values().stream().flatMap(l -> {
            synchronized (l) {
                return new ArrayList<>(l).stream();
            }
        }).collect(Collectors.toList());
        Supplier<Set<String>> ids = () -> all.get().stream().map(n -> n.path("current").path("id").asText(null))
            .filter(id -> id != null).collect(Collectors.toSet());
        write(feed, "lv-", 80);
        waitFor("every change delivered with its current version", () -> ids.get().containsAll(expected("lv-", 80)),
            () -> "handed " + all.get().size() + ", first " + all.get().stream().limit(1).collect(Collectors.toList()));
        waitFor("four leases, two per host", () -> {
            Map<String, String> owners = owners(leases);
            Map<String, Long> per = leasesPerOwner(owners);
            return owners.size() == 4 && per.getOrDefault("host-a", 0L) == 2 && per.getOrDefault("host-b", 0L) == 2;
        }, () -> owners(leases).toString());

        // Balanced, each host reads its own ranges: what follows reaches
        // both (17 keys over four ranges).
        write(feed, "mid-", 40);
        waitFor("the balanced hosts deliver what follows", () -> ids.get().containsAll(expected("mid-", 40)));

        // A replace: the new version, under a later LSN than the first.
        long firstLsn = all.get().stream().filter(n -> n.path("current").path("id").asText().equals("lv-7"))
            .findFirst().orElseThrow().path("metadata").path("lsn").asLong();
        feed.upsertItem(item("lv-7", "k7").put("v", 2)).block();
        waitFor("the replace delivered", () -> all.get().stream()
            .anyMatch(n -> n.path("current").path("id").asText().equals("lv-7") && n.path("current").path("v").asInt() == 2));
        JsonNode replaced = all.get().stream()
            .filter(n -> n.path("current").path("id").asText().equals("lv-7") && n.path("current").path("v").asInt() == 2)
            .findFirst().orElseThrow();
        assertTrue(replaced.path("metadata").path("lsn").asLong() > firstLsn, replaced.toString());

        // Both hosts handled changes, and every one came whole: its
        // current version and its metadata.
        assertTrue(!handed.get("host-a").isEmpty() && !handed.get("host-b").isEmpty(), handed.toString());
        for (JsonNode n : all.get()) {
            JsonNode current = n.get("current");
            assertTrue(current != null && current.isObject() && current.has("id") && current.has("pk"),
                "current: " + n);
            assertTrue(n.get("metadata").isObject(), "metadata: " + n);
            assertEquals(current.get("_lsn").asLong(), n.get("metadata").get("lsn").asLong(), n.toString());
            assertEquals(current.get("_ts").asLong(), n.get("metadata").get("crts").asLong(), n.toString());
        }
    }

    @Test
    void allVersionsAndDeletesDeliversATtlExpiryAsADelete() throws Exception {
        CosmosAsyncContainer feed = monitored(12000, -1);
        CosmosAsyncContainer leases = leases();
        List<String> changes = Collections.synchronizedList(new ArrayList<>());
        ChangeFeedProcessor processor = new ChangeFeedProcessorBuilder()
            .hostName("host-avad")
            .feedContainer(feed)
            .leaseContainer(leases)
            // All versions and deletes starts from now.
            .options(quick().setStartFromBeginning(false))
            .handleAllVersionsAndDeletesChanges((List<ChangeFeedProcessorItem> items) -> items.forEach(c -> {
                JsonNode node = c.toJsonNode();
                String id = node.path("current").has("id") ? node.path("current").get("id").asText()
                    : node.path("previous").has("id") ? node.path("previous").get("id").asText()
                    : node.path("metadata").path("id").asText();
                changes.add(c.getChangeFeedMetaData().getOperationType() + " " + id
                    + (c.getChangeFeedMetaData().isTimeToLiveExpired() ? " ttl" : ""));
            }))
            .buildChangeFeedProcessor();
        running.add(processor);
        processor.start().block();

        // Each lease reads from the moment it starts: write probes, each
        // under a key of its own, until both leases have delivered one
        // (and so checkpointed a continuation), so that what follows is
        // after the start of both.
        int[] probe = {0};
        waitFor("both leases reading", () -> {
            String id = "probe-" + probe[0]++;
            feed.createItem(item(id, id)).block();
            List<JsonNode> docs = leaseDocuments(leases);
            return docs.size() == 2 && docs.stream().allMatch(d -> "host-avad".equals(d.path("Owner").asText(null))
                && d.hasNonNull("ContinuationToken"));
        }, () -> leaseDocuments(leases).toString());

        feed.createItem(item("e", "e").put("ttl", 5)).block();
        feed.replaceItem(item("e", "e").put("ttl", 5).put("v", 2), "e", new PartitionKey("e"), new CosmosItemRequestOptions()).block();
        feed.createItem(item("d", "d")).block();
        feed.deleteItem("d", new PartitionKey("d")).block();
        waitFor("the writes delivered", () -> changes.contains(ChangeFeedOperationType.REPLACE + " e")
            && changes.contains(ChangeFeedOperationType.DELETE + " d"), changes::toString);
        emulator.advance(5);
        emulator.purge(); // returns once e is purged (the background purge may have been first)
        waitFor("the TTL delete delivered", () -> changes.contains(ChangeFeedOperationType.DELETE + " e ttl"), changes::toString);
        List<String> ofE = changes.stream().filter(s -> s.endsWith(" e") || s.endsWith(" e ttl")).collect(Collectors.toList());
        assertEquals(List.of(ChangeFeedOperationType.CREATE + " e", ChangeFeedOperationType.REPLACE + " e",
            ChangeFeedOperationType.DELETE + " e ttl"), ofE);
        List<String> ofD = changes.stream().filter(s -> s.endsWith(" d")).collect(Collectors.toList());
        assertEquals(List.of(ChangeFeedOperationType.CREATE + " d", ChangeFeedOperationType.DELETE + " d"), ofD);
    }

    /**
     * Stops a processor for good: stop() may return while a lease's worker
     * still reads (and sometimes without releasing its lease), so its
     * handler fails from now on and nothing more is checkpointed.
     */
    void stopForGood(ChangeFeedProcessor processor) {
        frozen = true;
        processor.stop().block(Duration.ofSeconds(30));
    }

    static int estimatedLag(ChangeFeedProcessor processor) {
        return processor.getEstimatedLag().block(WAIT).values().stream().mapToInt(Integer::intValue).sum();
    }

    static int currentStateLag(ChangeFeedProcessor processor) {
        return processor.getCurrentState().block(WAIT).stream()
            .mapToInt(ChangeFeedProcessorState::getEstimatedLag).sum();
    }

    /**
     * The estimator (getEstimatedLag, getCurrentState) counts a lease's
     * pending changes as the session token's LSN minus the first pending
     * item's _lsn, plus one. Session tokens name the partition's LSN, so it
     * is exactly what is pending, whatever another container (the lease
     * container's own checkpoints included) writes meanwhile.
     */
    @Test
    void theEstimatorCountsExactlyThePendingChanges() {
        CosmosAsyncContainer feed = monitored(400, null); // one range
        CosmosAsyncContainer leases = leases();
        database.createContainer("elsewhere", "/pk").block();
        CosmosAsyncContainer elsewhere = database.getContainer("elsewhere");
        ChangeFeedProcessor processor = latestVersion("host-est", feed, leases);
        processor.start().block();
        write(feed, "seen-", 3);
        waitFor("the first changes delivered and checkpointed",
            () -> allDelivered().containsAll(expected("seen-", 3)) && estimatedLag(processor) == 0,
            () -> leaseDocuments(leases).toString());
        stopForGood(processor);

        for (int i = 0; i < 10; i++) {
            feed.createItem(item("pending-" + i, "k" + i)).block();
            for (int j = 0; i % 2 == 0 && j < 5; j++) {
                elsewhere.createItem(item("elsewhere-" + i + "-" + j, "p")).block();
            }
        }
        assertEquals(10, estimatedLag(processor));
        assertEquals(10, currentStateLag(processor));
    }

    /**
     * The same over four ranges: each lease's session token names its own
     * range's LSN (LSNs are per partition, as on the service), so each
     * lease's lag is its range's pending writes and the total is exact,
     * however the writes interleave across ranges and deletes in between.
     */
    @Test
    void theEstimatorCountsExactlyThePendingChangesOfEveryRange() {
        CosmosAsyncContainer feed = monitored(24000, null); // four ranges
        CosmosAsyncContainer leases = leases();
        ChangeFeedProcessor processor = latestVersion("host-est4", feed, leases);
        processor.start().block();
        write(feed, "seen-", 20);
        waitFor("the first changes delivered and checkpointed on four leases",
            () -> allDelivered().containsAll(expected("seen-", 20)) && owners(leases).size() == 4
                && estimatedLag(processor) == 0,
            () -> leaseDocuments(leases).toString());
        stopForGood(processor);

        // Deletes take LSNs too, but what is pending is the 40 live items.
        feed.deleteItem("seen-3", new PartitionKey("k3")).block();
        feed.deleteItem("seen-4", new PartitionKey("k4")).block();
        write(feed, "pending-", 40);
        Map<String, Integer> perLease = processor.getEstimatedLag().block(WAIT);
        assertEquals(4, perLease.size(), perLease::toString);
        assertEquals(40, estimatedLag(processor), perLease::toString);
        assertEquals(40, currentStateLag(processor));
    }

    /**
     * The current API's estimator (handleLatestVersionChanges, whose
     * getCurrentState subtracts a lease's continuation from the range's
     * latest, both change feed etags): etags are each range's LSN, as on
     * the service, so over four ranges it counts exactly what is pending.
     */
    @Test
    void theCurrentApisEstimatorCountsExactlyThePendingChangesOfEveryRange() {
        CosmosAsyncContainer feed = monitored(24000, null); // four ranges
        CosmosAsyncContainer leases = leases();
        List<String> handled = Collections.synchronizedList(new ArrayList<>());
        ChangeFeedProcessor processor = new ChangeFeedProcessorBuilder()
            .hostName("host-current")
            .feedContainer(feed)
            .leaseContainer(leases)
            .options(quick())
            .handleLatestVersionChanges((List<ChangeFeedProcessorItem> items) -> {
                if (frozen) {
                    throw new IllegalStateException("frozen: not handled, so not checkpointed");
                }
                items.forEach(item -> handled.add(item.getCurrent().get("id").asText()));
            })
            .buildChangeFeedProcessor();
        running.add(processor);
        processor.start().block();
        write(feed, "seen-", 20);
        waitFor("the first changes handled and checkpointed on four leases",
            () -> handled.containsAll(expected("seen-", 20)) && owners(leases).size() == 4
                && currentStateLag(processor) == 0,
            () -> leaseDocuments(leases).toString());
        stopForGood(processor);

        write(feed, "pending-", 40);
        List<ChangeFeedProcessorState> states = processor.getCurrentState().block(WAIT);
        assertEquals(4, states.size(), states::toString);
        assertEquals(40, currentStateLag(processor), () -> states.stream()
            .map(s -> s.getLeaseToken() + "=" + s.getEstimatedLag()).collect(Collectors.joining(",")));
    }
}
