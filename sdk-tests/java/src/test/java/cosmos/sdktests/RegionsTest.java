// A multi-region account (--regions; docs/src/regions.md) through the Java
// SDK with preferredRegions, addressed at the endpoint the emulator prints:
// https://localhost:PORT/. The SDK derives regional host names from the
// endpoint's host when preferredRegions is set, and refuses 127.0.0.1 in
// buildClient() ("invalid location [westus] or serviceEndpoint"): the
// reason the emulator prints localhost (docs/src/running.md). The emulator
// signs with the suite's authority (--cert-dir), which the JVM trusts.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.models.CosmosItemResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class RegionsTest {

    @Test
    void preferredRegionsWorkWithThePrintedEndpoint() throws Exception {
        Emulators.https(); // the JVM's trust store first
        try (Emulator regional = Emulator.start(true, "--regions", "West US,East US")) {
            assertTrue(regional.endpoint.startsWith("https://localhost:"), regional.endpoint);
            try (CosmosClient client = Emulators.builder(regional)
                    .preferredRegions(List.of("East US", "West US"))
                    .buildClient()) {
                String db = Emulators.unique("regions");
                client.createDatabase(db);
                client.getDatabase(db).createContainer("c", "/pk");
                CosmosContainer container = client.getDatabase(db).getContainer("c");
                ObjectNode item = JsonNodeFactory.instance.objectNode().put("id", "a").put("pk", "p").put("v", 1);
                CosmosItemResponse<ObjectNode> written = container.createItem(item);
                assertEquals(201, written.getStatusCode());
                assertTrue(lower(written.getDiagnostics().getContactedRegionNames()).contains("west us"),
                    "writes go to the write region: " + written.getDiagnostics().getContactedRegionNames());
                CosmosItemResponse<JsonNode> read = container.readItem("a",
                    new com.azure.cosmos.models.PartitionKey("p"), JsonNode.class);
                assertEquals(1, read.getItem().get("v").asInt());
                assertTrue(lower(read.getDiagnostics().getContactedRegionNames()).contains("east us"),
                    "reads go to the first preferred region: " + read.getDiagnostics().getContactedRegionNames());
            }
            // The same emulator at its address instead of its name: what the
            // guide warns of (should the SDK stop refusing it, this fails).
            String byAddress = regional.endpoint.replace("://localhost:", "://127.0.0.1:");
            assertThrows(RuntimeException.class, () -> Emulators.builder(regional)
                .endpoint(byAddress)
                .preferredRegions(List.of("East US", "West US"))
                .buildClient()
                .close());
        }
    }

    private static List<String> lower(java.util.Collection<String> names) {
        return names.stream().map(n -> n.toLowerCase(java.util.Locale.ROOT)).collect(Collectors.toList());
    }
}
