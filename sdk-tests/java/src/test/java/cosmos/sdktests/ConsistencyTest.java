// The account's consistency level (--consistency; docs/src/consistency.md)
// as the Java SDK reads it in each mode. In Direct mode the SDK itself
// enforces Strong and Bounded Staleness: it reads from two replicas (a
// read quorum) and compares their LSNs, global committed and quorum-acked
// LSNs, and sends barrier (Head) requests until they agree (JAVA
// `QuorumReader`, `ConsistencyReader`, `StoreReader`); a database read
// asks two secondaries of the master partition. Each test here fails if
// the replicas' answers do not satisfy it: the SDK then retries until its
// timeout and throws 410/408.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.ConsistencyLevel;
import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosItemResponse;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ConsistencyTest {

    /** A client of `emulator` in the run's mode at the account's own level. */
    private static CosmosClient client(Emulator emulator) {
        CosmosClientBuilder builder = new CosmosClientBuilder()
            .endpoint(emulator.endpoint)
            .key(Emulator.KEY)
            .contentResponseOnWriteEnabled(true);
        return (Emulators.direct() ? builder.directMode() : builder.gatewayMode()).buildClient();
    }

    /** The distinct replicas a read's diagnostics name (`storePhysicalAddress`). */
    private static Set<String> replicasRead(String diagnostics) {
        Matcher address = Pattern.compile("\"storePhysicalAddress\":\"(rntbd://[^\"]+)\"").matcher(diagnostics);
        Set<String> replicas = new HashSet<>();
        while (address.find()) {
            replicas.add(address.group(1));
        }
        return replicas;
    }

    @ParameterizedTest
    @ValueSource(strings = {"Strong", "BoundedStaleness", "Session"})
    void everyOperationSucceedsAtTheAccountsLevel(String level) throws Exception {
        Emulators.https(); // the JVM's trust store first
        try (Emulator emulator = Emulator.start(true, "--consistency", level);
                CosmosClient client = client(emulator)) {
            String db = Emulators.unique("consistency");
            client.createDatabase(db);
            // A database read: in Direct mode, from the master partition's replicas.
            assertEquals(db, client.getDatabase(db).read().getProperties().getId());
            client.getDatabase(db).createContainer("c", "/pk");
            CosmosContainer container = client.getDatabase(db).getContainer("c");
            ObjectNode item = JsonNodeFactory.instance.objectNode().put("id", "a").put("pk", "p").put("v", 1);
            assertEquals(201, container.createItem(item).getStatusCode());
            // Each read sees the write before it, at the account's level.
            for (int v = 2; v <= 4; v++) {
                item.put("v", v);
                container.replaceItem(item, "a", new PartitionKey("p"), new CosmosItemRequestOptions());
                CosmosItemResponse<JsonNode> read = container.readItem("a", new PartitionKey("p"), JsonNode.class);
                assertEquals(v, read.getItem().get("v").asInt(), level);
                if (Emulators.direct()) {
                    // A quorum of two replicas for Strong and Bounded
                    // Staleness, one for Session: the SDK's own choice.
                    int quorum = level.equals("Session") ? 1 : 2;
                    assertEquals(quorum, replicasRead(read.getDiagnostics().toString()).size(),
                        level + ": " + read.getDiagnostics());
                }
            }
            List<Integer> seen = container
                .queryItems("SELECT * FROM c", new CosmosQueryRequestOptions(), JsonNode.class)
                .stream().map(n -> n.get("v").asInt()).collect(Collectors.toList());
            assertEquals(List.of(4), seen);
            // A read weaker than the account's is allowed, one stronger is not
            // (the SDK refuses it before sending when the account is weaker).
            CosmosItemRequestOptions eventual = new CosmosItemRequestOptions()
                .setConsistencyLevel(ConsistencyLevel.EVENTUAL);
            assertEquals(4, container.readItem("a", new PartitionKey("p"), eventual, JsonNode.class)
                .getItem().get("v").asInt());
            container.deleteItem("a", new PartitionKey("p"), new CosmosItemRequestOptions());
            CosmosException gone = assertThrows(CosmosException.class,
                () -> container.readItem("a", new PartitionKey("p"), JsonNode.class));
            assertEquals(404, gone.getStatusCode());
            client.getDatabase(db).delete();
        }
    }
}
