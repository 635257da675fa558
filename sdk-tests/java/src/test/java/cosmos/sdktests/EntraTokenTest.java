// A client with a token credential (Microsoft Entra ID) instead of the
// key, in the run's mode, as Microsoft's emulator accepts one: a JWT whose
// signature part is the account key, base64url-encoded (what the SDKs'
// own emulator tests build, `CosmosEmulatorCredential`). The data plane
// works (items, queries); managing resources is 403/5300, as on the
// service. In Direct mode the token travels in the AuthorizationToken
// token of every RNTBD request.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.core.credential.AccessToken;
import com.azure.core.credential.TokenCredential;
import com.azure.cosmos.ConsistencyLevel;
import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

class EntraTokenTest {

    /** The token Microsoft's emulator accepts, valid for an hour. */
    private static String emulatorToken() {
        Base64.Encoder url = Base64.getUrlEncoder().withoutPadding();
        long now = Instant.now().getEpochSecond();
        String header = "{\"typ\":\"JWT\",\"alg\":\"RS256\",\"kid\":\"CosmosEmulatorPrimaryMaster\"}";
        String claims = "{\"aud\":\"https://localhost.localhost\",\"iss\":\"https://sts.fake-issuer.net/7b1999a1-dfd7-440e-8204-00170979b984\","
            + "\"iat\":" + now + ",\"nbf\":" + now + ",\"exp\":" + (now + 3600) + ",\"oid\":\"96313034-4739-43cb-93cd-74193adbe5b6\"}";
        return String.join(".",
            url.encodeToString(header.getBytes(StandardCharsets.UTF_8)),
            url.encodeToString(claims.getBytes(StandardCharsets.UTF_8)),
            url.encodeToString(Emulator.KEY.getBytes(StandardCharsets.UTF_8)));
    }

    private static final TokenCredential EMULATOR_CREDENTIAL = request -> Mono.just(
        new AccessToken(emulatorToken(), OffsetDateTime.now(ZoneOffset.UTC).plusHours(1)));

    @Test
    void aTokenCredentialWorksOnTheDataPlaneAndCannotManageResources() {
        String db = Emulators.unique("entra");
        try (CosmosClient admin = Emulators.client()) {
            admin.createDatabase(db);
            admin.getDatabase(db).createContainer("c", "/pk");
        }
        CosmosClientBuilder builder = new CosmosClientBuilder()
            .endpoint(Emulators.https().endpoint)
            .credential(EMULATOR_CREDENTIAL)
            .consistencyLevel(ConsistencyLevel.SESSION)
            .contentResponseOnWriteEnabled(true);
        try (CosmosClient client = (Emulators.direct() ? builder.directMode() : builder.gatewayMode()).buildClient()) {
            CosmosContainer items = client.getDatabase(db).getContainer("c");
            ObjectNode item = JsonNodeFactory.instance.objectNode().put("id", "a").put("pk", "p").put("v", 1);
            assertEquals(201, items.createItem(item).getStatusCode());
            item.put("v", 2);
            items.upsertItem(item);
            assertEquals(2, items.readItem("a", new PartitionKey("p"), JsonNode.class).getItem().get("v").asInt());
            List<Integer> seen = items.queryItems("SELECT VALUE c.v FROM c", new CosmosQueryRequestOptions(), Integer.class)
                .stream().collect(Collectors.toList());
            assertEquals(List.of(2), seen);
            assertEquals(204, items.deleteItem("a", new PartitionKey("p"), new CosmosItemRequestOptions()).getStatusCode());
            // A principal's data-plane role manages no resource.
            CosmosException blocked = assertThrows(CosmosException.class,
                () -> client.getDatabase(db).createContainer("d", "/pk"));
            assertEquals(403, blocked.getStatusCode());
            assertEquals(5300, blocked.getSubStatusCode());
        } finally {
            try (CosmosClient admin = Emulators.client()) {
                admin.getDatabase(db).delete();
            }
        }
    }
}
