// Throttling (--rate-limit, docs/src/request-units.md#throttling) through
// the SDK's own retry policy: a container of 400 RU/s spends its budget in
// one second of the emulator's manual clock, and the next write is refused
// with 429/3200 and the wait until the next second (x-ms-retry-after-ms over
// HTTPS, the RetryAfterMilliseconds token over RNTBD). With retries off the
// 429 reaches the application; with the SDK's default retries the write
// waits, is refused again while the second stays spent, and goes through
// once the test moves the clock on. The diagnostics name the path that ran
// (DiagnosticsTest): a replica's store results in Direct mode, the gateway's
// statistics in gateway mode.
//
// Each test has an emulator of its own, so that its clock starts at a whole
// second and no other test spends its budget.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.cosmos.CosmosClient;
import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.ThrottlingRetryOptions;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosItemResponse;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.ThroughputProperties;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ThrottlingTest {
    /** Far more writes than 400 RU buy in one second. */
    private static final int ENOUGH = 1_000;

    @Test
    void withRetriesOffTheThrottledWriteReachesTheApplication() throws Exception {
        Emulators.https(); // the JVM's trust store first
        try (Emulator emulator = Emulator.start(true, "--rate-limit");
                CosmosClient client = Emulators.builder(emulator)
                    .throttlingRetryOptions(new ThrottlingRetryOptions().setMaxRetryAttemptsOnThrottledRequests(0))
                    .buildClient()) {
            CosmosContainer items = container(client, Emulators.unique("throttling"), "throttled");
            CosmosException throttled = spendTheSecond(items);

            assertEquals(429, throttled.getStatusCode(), throttled.toString());
            assertEquals(3200, throttled.getSubStatusCode(), throttled.toString());
            // The manual clock stands on a whole second: the whole of it to wait.
            assertEquals(Duration.ofMillis(1000), throttled.getRetryAfterDuration(), throttled.toString());
            String diagnostics = throttled.getDiagnostics().toString();
            assertTrue(diagnostics.contains("\"statusCode\":429"), diagnostics);
            DiagnosticsTest.assertDirect(diagnostics, Emulators.direct(), "the 429");
            if (Emulators.direct()) {
                // The replica's RetryAfterMilliseconds token, as the store result read it.
                assertTrue(diagnostics.contains("\"retryAfterInMs\":1000.0"), diagnostics);
            }
            // Not retried: the SDK counts the one 429 it gave up on.
            assertTrue(diagnostics.contains("\"retryContext\":{\"statusAndSubStatusCodes\":[[429,3200]],"), diagnostics);
            assertEquals(1, throttled.getDiagnostics().getDiagnosticsContext().getRetryCount(), diagnostics);

            // Nothing was written (seen in the next second, which refills
            // the budget); that second takes the write.
            emulator.advance(1);
            CosmosException notThere = assertThrows(CosmosException.class,
                () -> items.readItem("refused", new PartitionKey("refused"), JsonNode.class));
            assertEquals(404, notThere.getStatusCode());
            assertEquals(201, items.createItem(item("refused")).getStatusCode());
        }
    }

    @Test
    void theSdksRetriesGetTheWriteThroughOnceTheSecondMovesOn() throws Exception {
        Emulators.https();
        try (Emulator emulator = Emulator.start(true, "--rate-limit");
                CosmosClient client = Emulators.builder(emulator)
                    .throttlingRetryOptions(new ThrottlingRetryOptions()
                        .setMaxRetryAttemptsOnThrottledRequests(30)
                        .setMaxRetryWaitTime(Duration.ofSeconds(60)))
                    .buildClient();
                CosmosClient noRetries = Emulators.builder(emulator)
                    .throttlingRetryOptions(new ThrottlingRetryOptions().setMaxRetryAttemptsOnThrottledRequests(0))
                    .buildClient()) {
            String database = Emulators.unique("throttling");
            CosmosContainer items = container(client, database, "retried");
            // The retrying client knows its replicas before the second is spent.
            items.createItem(item("warm"));
            spendTheSecond(noRetries.getDatabase(database).getContainer("retried"));

            CompletableFuture<CosmosItemResponse<ObjectNode>> write =
                CompletableFuture.supplyAsync(() -> items.createItem(item("through")));
            // The SDK waits the advertised 1,000 ms between tries, and each
            // try finds the same second spent: a few tries, all refused.
            Thread.sleep(2_500);
            assertTrue(!write.isDone(), "the write waits while the second is spent: " + write);
            emulator.advance(1);
            CosmosItemResponse<ObjectNode> written = write.get(30, TimeUnit.SECONDS);

            assertEquals(201, written.getStatusCode());
            String diagnostics = written.getDiagnostics().toString();
            int retries = written.getDiagnostics().getDiagnosticsContext().getRetryCount();
            assertTrue(retries >= 2, "retried at least twice: " + retries + " " + diagnostics);
            assertTrue(diagnostics.contains("[429,3200]"), "the retries were the 429s: " + diagnostics);
            DiagnosticsTest.assertDirect(diagnostics, Emulators.direct(), "the retried write");
            assertEquals("through",
                items.readItem("through", new PartitionKey("through"), JsonNode.class).getItem().get("id").asText());
        }
    }

    /** A container of 400 RU/s (one partition), in a database of its own. */
    private static CosmosContainer container(CosmosClient client, String database, String id) {
        client.createDatabase(database);
        client.getDatabase(database).createContainer(new CosmosContainerProperties(id, "/pk"),
            ThroughputProperties.createManualThroughput(400));
        return client.getDatabase(database).getContainer(id);
    }

    /** Writes until this second's budget is spent; the write refused (named "refused"). */
    private static CosmosException spendTheSecond(CosmosContainer items) {
        for (int i = 0; i < ENOUGH; i++) {
            try {
                items.createItem(item("spend-" + i));
            } catch (CosmosException e) {
                if (e.getStatusCode() != 429) {
                    throw e;
                }
                return assertThrows(CosmosException.class, () -> items.createItem(item("refused")));
            }
        }
        throw new AssertionError(ENOUGH + " writes in one second of a 400 RU/s container, none throttled");
    }

    private static ObjectNode item(String id) {
        return JsonNodeFactory.instance.objectNode().put("id", id).put("pk", id).put("text", "x".repeat(200));
    }
}
