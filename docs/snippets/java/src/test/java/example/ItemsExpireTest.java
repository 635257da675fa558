// The guide's first Java test (docs/src/quick-start/java.md): an item with
// a ttl of 10 s, read the second before it expires and not found at it,
// the emulator's test clock moved on through its control API.
package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.PartitionKey;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class ItemsExpireTest {
    // ANCHOR: client
    static final String ENDPOINT = "https://localhost:8081/";
    static final String KEY =
        "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

    static CosmosClient client() {
        return new CosmosClientBuilder()
            .endpoint(ENDPOINT)
            .key(KEY)
            // No connection mode: the SDK's default, Direct mode, as in
            // production (`.gatewayMode()` works as well).
            .buildClient();
    }
    // ANCHOR_END: client

    // ANCHOR: clock
    /** Moves the emulator's test clock on; a control request is signed like an account read. */
    static void advance(long seconds) throws Exception {
        String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(ZonedDateTime.now(ZoneOffset.UTC));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(Base64.getDecoder().decode(KEY), "HmacSHA256"));
        byte[] sig = mac.doFinal(("post\n\n\n" + date.toLowerCase() + "\n\n").getBytes(StandardCharsets.UTF_8));
        String auth = "type=master&ver=1.0&sig=" + Base64.getEncoder().encodeToString(sig);
        HttpRequest request = HttpRequest.newBuilder(URI.create(ENDPOINT + "_emulator/clock"))
            .header("x-ms-date", date)
            .header("authorization", URLEncoder.encode(auth, StandardCharsets.UTF_8))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"advance\": " + seconds + "}"))
            .build();
        // The JVM's default SSL context reads the trust store Surefire names.
        HttpResponse<String> response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
    }
    // ANCHOR_END: clock

    // ANCHOR: test
    @Test
    void anItemExpiresWhenTheClockReachesItsTtl() throws Exception {
        try (CosmosClient client = client()) {
            client.createDatabaseIfNotExists("quickstart");
            CosmosContainerProperties properties = new CosmosContainerProperties("items", "/pk");
            properties.setDefaultTimeToLiveInSeconds(-1); // TTL on, items expire only by their own ttl
            client.getDatabase("quickstart").createContainerIfNotExists(properties);
            CosmosContainer items = client.getDatabase("quickstart").getContainer("items");

            items.createItem(Map.of("id", "a", "pk", "a", "ttl", 10));
            advance(9); // 9 s pass at once, for the emulator only
            assertEquals("a", items.readItem("a", new PartitionKey("a"), Map.class).getItem().get("id"));

            advance(1); // the 10th second: expired, gone from every API
            CosmosException gone = assertThrows(CosmosException.class,
                () -> items.readItem("a", new PartitionKey("a"), Map.class));
            assertEquals(404, gone.getStatusCode());
        }
    }
    // ANCHOR_END: test
}
