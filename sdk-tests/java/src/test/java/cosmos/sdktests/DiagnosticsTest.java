// Which path served an operation, as an application reads it in the
// SDK's diagnostics (docs/src/direct-mode.md, "What a client sees"): the
// client's connection mode, and evidence of the transport that carried the
// request. In Direct mode a point read is answered by a replica over RNTBD
// (a store result naming an rntbd:// address); in gateway mode by the
// gateway over HTTPS (a gateway statistics entry, no store result).
//
// With -Dcosmos.diagnostics.print=true the test prints both modes'
// CosmosDiagnostics.toString(), the text the guide quotes.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.ConsistencyLevel;
import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosDiagnostics;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.junit.jupiter.api.Test;

class DiagnosticsTest {

    @Test
    void aPointReadsDiagnosticsNameTheTransportThatServedIt() {
        try (Db db = new Db("diagnostics")) {
            CosmosContainer items = db.container("c");
            items.createItem(JsonNodeFactory.instance.objectNode().put("id", "a").put("pk", "p"));
            String direct = read(items, "a");
            assertDirect(direct, Emulators.direct(), "this run's client");

            // The other mode, on the same emulator: both shapes in every run.
            CosmosClientBuilder otherMode = new CosmosClientBuilder()
                .endpoint(db.emulator.endpoint)
                .key(Emulator.KEY)
                .consistencyLevel(ConsistencyLevel.SESSION);
            try (CosmosClient other = (Emulators.direct() ? otherMode.gatewayMode() : otherMode.directMode())
                    .buildClient()) {
                String otherText = read(other.getDatabase(db.name).getContainer("c"), "a");
                assertDirect(otherText, !Emulators.direct(), "the other mode's client");
                if (Boolean.getBoolean("cosmos.diagnostics.print")) {
                    System.out.println((Emulators.direct() ? "DIRECT: " : "GATEWAY: ") + direct);
                    System.out.println((Emulators.direct() ? "GATEWAY: " : "DIRECT: ") + otherText);
                }
            }
        }
    }

    @Test
    void aRefusalNamesTheAddressThatAnsweredIt() {
        try (Db db = new Db("diagnostics")) {
            CosmosContainer items = db.container("c");
            CosmosException missing = assertThrows(CosmosException.class,
                () -> items.readItem("missing", new PartitionKey("p"), JsonNode.class));
            assertEquals(404, missing.getStatusCode());
            String text = missing.toString();
            if (Boolean.getBoolean("cosmos.diagnostics.print")) {
                System.out.println((Emulators.direct() ? "DIRECT 404: " : "GATEWAY 404: ") + text);
            }
            String address = Emulators.direct() ? "\"resourceAddress\":\"rntbd://" : "\"resourceAddress\":\"https://";
            assertTrue(text.contains(address), text);
            assertDirect(text, Emulators.direct(), "the 404");
        }
    }

    private static String read(CosmosContainer items, String id) {
        CosmosDiagnostics diagnostics = items.readItem(id, new PartitionKey("p"), JsonNode.class).getDiagnostics();
        return diagnostics.toString();
    }

    /** What a Direct-mode read shows, and what a gateway-mode read shows instead. */
    static void assertDirect(String text, boolean direct, String who) {
        if (direct) {
            assertTrue(text.contains("\"connectionMode\":\"DIRECT\""), who + ": " + text);
            assertTrue(text.contains("\"storeResult\""), who + ": a replica's answer: " + text);
            assertTrue(text.contains("rntbd://"), who + ": a replica's address: " + text);
            assertFalse(text.contains("\"gatewayStatisticsList\":[{"), who + ": no gateway request: " + text);
        } else {
            assertTrue(text.contains("\"connectionMode\":\"GATEWAY\""), who + ": " + text);
            assertTrue(text.contains("\"gatewayStatisticsList\":[{"), who + ": the gateway's answer: " + text);
            assertFalse(text.contains("rntbd://"), who + ": no replica: " + text);
        }
    }
}
