// A multi-region account (--regions "West US,East US", docs/src/regions.md)
// losing a region, through the SDK with preferred regions: reads go to the
// first preferred region, East US, until it is taken down
// (POST /_emulator/regions/{name}/down: refuse, 503, 403-1008), then to
// West US; a region that resets connections fails the read instead; and
// writes follow a failover of the write region to East US, with the old
// one still serving reads or refusing connections (a 503 or a 403/1008 is
// no failover signal for a write in a single-write account: the SDK
// retries those in another region for reads only, its ClientRetryPolicy).
// In Direct mode each region's replicas are on that region's endpoint
// (host:port), so the diagnostics name the region that answered by its
// port too. Each test has an emulator and a client of its own: the SDK
// remembers an unavailable region for minutes.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosDiagnostics;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosItemResponse;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RegionOutageTest {

    /**
     * Not `hang`: a hung region is left too, but slowly for a suite. In
     * Direct mode the read waits out the replicas' network request timeout
     * (5 s by default) on each of the SDK's tries, 38 s in all when
     * measured (and the whole test 56 s with the timeout at its least,
     * 1 s); in gateway mode its HTTP response timeout, 60 s a try, over
     * five minutes in all.
     */
    @ParameterizedTest
    @ValueSource(strings = {"refuse", "503", "403-1008"})
    void readsGoOnInTheNextPreferredRegionWhileTheFirstIsDown(String mode) throws Exception {
        Emulators.https(); // the JVM's trust store first
        try (Emulator regional = Emulator.start(true, "--regions", "West US,East US");
                CosmosClient client = Emulators.builder(regional)
                    .preferredRegions(List.of("East US", "West US"))
                    .buildClient()) {
            Map<String, Integer> ports = ports(regional);
            CosmosContainer items = withAnItem(client);
            CosmosItemResponse<JsonNode> before = items.readItem("a", new PartitionKey("p"), JsonNode.class);
            assertServedBy(before.getDiagnostics(), "east us", ports.get("East US"));

            regional.control("POST", "_emulator/regions/East%20US/down", Map.of("mode", mode));
            CosmosItemResponse<JsonNode> during = items.readItem("a", new PartitionKey("p"), JsonNode.class);
            assertEquals(1, during.getItem().get("v").asInt());
            assertServedBy(during.getDiagnostics(), "west us", ports.get("West US"));
            // And the next write and read, with the region still down.
            items.upsertItem(item("a", 2));
            CosmosItemResponse<JsonNode> after = items.readItem("a", new PartitionKey("p"), JsonNode.class);
            assertEquals(2, after.getItem().get("v").asInt());
            assertServedBy(after.getDiagnostics(), "west us", ports.get("West US"));
        }
    }

    /**
     * A region that resets each connection as a request arrives: the Java
     * SDK does not move on, in either mode. The reset comes after the
     * request was sent, which its retry policy does not take for the
     * region being unavailable (it does for a connection refused); in
     * Direct mode the replicas' resets send it to re-read the addresses,
     * whose request the region resets too, and that reset reaches the
     * application. Should the SDK start moving on, this fails.
     */
    @Test
    void aReadRegionThatResetsConnectionsFailsTheReadThatMeetsIt() throws Exception {
        Emulators.https();
        try (Emulator regional = Emulator.start(true, "--regions", "West US,East US");
                CosmosClient client = Emulators.builder(regional)
                    .preferredRegions(List.of("East US", "West US"))
                    .buildClient()) {
            CosmosContainer items = withAnItem(client);
            items.readItem("a", new PartitionKey("p"), JsonNode.class);
            regional.control("POST", "_emulator/regions/East%20US/down", Map.of("mode", "reset"));
            CosmosException reset = assertThrows(CosmosException.class,
                () -> items.readItem("a", new PartitionKey("p"), JsonNode.class));
            assertTrue(reset.getMessage().contains("Connection reset by peer"), reset.toString());
            List<String> contacted = reset.getDiagnostics().getContactedRegionNames().stream()
                .map(n -> n.toLowerCase(Locale.ROOT)).collect(Collectors.toList());
            assertEquals(List.of("east us"), contacted, reset.toString());
        }
    }

    /**
     * The write region stops taking connections and East US takes the
     * writes. The client is given East US's endpoint: the SDK re-reads the
     * account at the endpoint it was given, or else at host names it
     * derives from it for each preferred region (`localhost-westus`, as
     * `myaccount-westus.documents.azure.com` on the service), which do not
     * resolve here, where regions differ by port.
     */
    @ParameterizedTest
    @ValueSource(strings = {"refuse"})
    void writesFollowAFailoverAwayFromAWriteRegionThatIsDown(String mode) throws Exception {
        Emulators.https();
        try (Emulator regional = Emulator.start(true, "--regions", "West US,East US")) {
            Map<String, Integer> ports = ports(regional);
            String eastUs = "https://localhost:" + ports.get("East US") + "/";
            try (CosmosClient client = Emulators.builder(regional)
                    .endpoint(eastUs)
                    .preferredRegions(List.of("West US", "East US"))
                    .buildClient()) {
                CosmosContainer items = withAnItem(client);

                regional.controlAt(eastUs, "POST", "_emulator/failover", Map.of("writeRegion", "East US"));
                regional.controlAt(eastUs, "POST", "_emulator/regions/West%20US/down", Map.of("mode", mode));
                CosmosItemResponse<ObjectNode> written = items.createItem(item("b", 1));
                assertEquals(201, written.getStatusCode());
                assertServedBy(written.getDiagnostics(), "east us", ports.get("East US"));
                CosmosItemResponse<JsonNode> read = items.readItem("b", new PartitionKey("p"), JsonNode.class);
                assertEquals("b", read.getItem().get("id").asText());
                assertServedBy(read.getDiagnostics(), "east us", ports.get("East US"));
            }
        }
    }

    @Test
    void writesFollowAFailoverWhileTheOldWriteRegionStillServesReads() throws Exception {
        Emulators.https();
        try (Emulator regional = Emulator.start(true, "--regions", "West US,East US");
                CosmosClient client = Emulators.builder(regional)
                    .preferredRegions(List.of("West US", "East US"))
                    .buildClient()) {
            Map<String, Integer> ports = ports(regional);
            CosmosContainer items = withAnItem(client);
            regional.control("POST", "_emulator/failover", Map.of("writeRegion", "East US"));
            // West US answers the write 403/3 (WriteForbidden): the SDK
            // re-reads the account and writes to East US.
            CosmosItemResponse<ObjectNode> written = items.createItem(item("b", 1));
            assertEquals(201, written.getStatusCode());
            assertServedBy(written.getDiagnostics(), "east us", ports.get("East US"));
            CosmosItemResponse<JsonNode> read = items.readItem("b", new PartitionKey("p"), JsonNode.class);
            assertServedBy(read.getDiagnostics(), "west us", ports.get("West US"));
        }
    }

    /**
     * Not an outage but its mildest form: a read region whose replica has
     * not applied the client's own write (replication paused). Its replica
     * answers the session read 404/1002 (ReadSessionNotAvailable) and the
     * SDK retries it on the write region, which has the write; once the
     * replica catches up, reads are the read region's again.
     */
    @Test
    void aLaggingReadRegionSendsASessionReadToTheWriteRegion() throws Exception {
        Emulators.https();
        try (Emulator regional = Emulator.start(true, "--regions", "West US,East US");
                CosmosClient client = Emulators.builder(regional)
                    .preferredRegions(List.of("East US", "West US"))
                    .buildClient()) {
            Map<String, Integer> ports = ports(regional);
            CosmosContainer items = withAnItem(client);
            regional.control("POST", "_emulator/regions/East%20US/replication", Map.of("paused", true));
            items.upsertItem(item("a", 2));
            CosmosItemResponse<JsonNode> behind = items.readItem("a", new PartitionKey("p"), JsonNode.class);
            assertEquals(2, behind.getItem().get("v").asInt(), "the client's own write, read back");
            String text = behind.getDiagnostics().toString();
            assertTrue(text.contains("\"subStatusCode\":1002"), "East US's replica said it lacks the session: " + text);
            assertServedBy(behind.getDiagnostics(), "west us", ports.get("West US"));

            regional.control("POST", "_emulator/regions/East%20US/replication", Map.of("paused", false));
            CosmosItemResponse<JsonNode> caughtUp = items.readItem("a", new PartitionKey("p"), JsonNode.class);
            assertEquals(2, caughtUp.getItem().get("v").asInt());
            assertServedBy(caughtUp.getDiagnostics(), "east us", ports.get("East US"));
        }
    }

    private static CosmosContainer withAnItem(CosmosClient client) {
        String db = Emulators.unique("outage");
        client.createDatabase(db);
        client.getDatabase(db).createContainer("c", "/pk");
        CosmosContainer items = client.getDatabase(db).getContainer("c");
        items.createItem(item("a", 1));
        return items;
    }

    private static ObjectNode item(String id, int v) {
        return JsonNodeFactory.instance.objectNode().put("id", id).put("pk", "p").put("v", v);
    }

    /** Each region's port, from GET /_emulator/regions. */
    private static Map<String, Integer> ports(Emulator regional) throws Exception {
        Map<String, Integer> ports = new HashMap<>();
        for (JsonNode region : regional.control("GET", "_emulator/regions", null).get("regions")) {
            ports.put(region.get("name").asText(), URI.create(region.get("endpoint").asText()).getPort());
        }
        assertEquals(2, ports.size(), ports.toString());
        return ports;
    }

    /**
     * The operation ended in {@code region}: the SDK names it among the
     * regions contacted, and in Direct mode the last replica that answered
     * is on that region's port (in gateway mode, the last gateway request).
     */
    private static void assertServedBy(CosmosDiagnostics diagnostics, String region, int port) {
        String text = diagnostics.toString();
        List<String> contacted = diagnostics.getContactedRegionNames().stream()
            .map(n -> n.toLowerCase(Locale.ROOT)).collect(Collectors.toList());
        assertTrue(contacted.contains(region), region + " among " + contacted + ": " + text);
        String marker = Emulators.direct() ? "\"storePhysicalAddress\":\"rntbd://" : "\"endpoint\":\"https://";
        int last = text.lastIndexOf(marker);
        assertTrue(last >= 0, "no " + marker + " in " + text);
        String address = text.substring(last + marker.length());
        String hostPort = address.substring(0, address.indexOf('/'));
        assertTrue(hostPort.endsWith(":" + port), "the last answer came from " + hostPort + ", not "
            + region + "'s port " + port + ": " + text);
    }
}
