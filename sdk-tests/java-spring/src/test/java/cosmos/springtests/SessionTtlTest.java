// Time to live through Spring Data: the container default from @Container's
// timeToLive, an item's own `ttl` overriding it (a number, or -1 for never),
// and items expiring as the emulator's test clock moves
// (POST /_emulator/clock, then POST /_emulator/purge): the repository no
// longer finds them the second they expire, and still does the second
// before. The rules are the documentation's (docs/src/ttl.md): an item
// expires when _ts + ttl <= now, _ts being its last write.
package cosmos.springtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.spring.data.cosmos.core.CosmosTemplate;
import com.azure.spring.data.cosmos.core.mapping.Container;
import com.azure.spring.data.cosmos.core.mapping.PartitionKey;
import com.azure.spring.data.cosmos.exception.CosmosAccessException;
import cosmos.sdktests.Emulator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.annotation.Id;

class SessionTtlTest extends EmulatorTest {
    @Autowired
    SessionRepository sessions;

    @Autowired
    CosmosTemplate template;

    @Autowired
    CosmosAsyncClient client;

    private final Emulator emulator = SharedEmulator.get();

    @BeforeEach
    void empty() {
        sessions.deleteAll();
    }

    /** Moves the test clock on, then waits for the purge of everything due. */
    private void advance(long seconds) throws Exception {
        emulator.advance(seconds);
        emulator.purge();
    }

    private List<String> ids(String user) {
        List<String> ids = new ArrayList<>();
        sessions.findByUser(user).forEach(s -> ids.add(s.getId()));
        ids.sort(null);
        return ids;
    }

    @Test
    void theContainerIsCreatedWithTheAnnotationsDefaultTtl() {
        Integer ttl = client.getDatabase(CosmosTestConfig.DATABASE).getContainer(Session.CONTAINER)
            .read().block().getProperties().getDefaultTimeToLiveInSeconds();
        assertThat(ttl).isEqualTo(Session.DEFAULT_TTL);
    }

    @Test
    void anItemWithoutTtlExpiresAfterTheContainerDefault() throws Exception {
        sessions.save(new Session("a", "ann", null));
        sessions.save(new Session("keep", "ann", -1));
        advance(Session.DEFAULT_TTL - 1);
        assertThat(sessions.findById("a")).isPresent();
        assertThat(sessions.count()).isEqualTo(2);

        advance(1);
        assertThat(sessions.findById("a")).isEmpty();
        assertThat(sessions.existsById("a")).isFalse();
        assertThat(sessions.count()).isEqualTo(1);
        assertThat(ids("ann")).containsExactly("keep");
        assertThat(sessions.countByUser("ann")).isEqualTo(1);
    }

    @Test
    void anItemsOwnTtlOverridesTheContainerDefault() throws Exception {
        sessions.save(new Session("short", "bo", 10));
        sessions.save(new Session("long", "bo", 120));
        sessions.save(new Session("default", "bo", null));
        sessions.save(new Session("never", "bo", -1));
        assertThat(sessions.findById("short").orElseThrow().getTtl()).isEqualTo(10);

        advance(9);
        assertThat(ids("bo")).containsExactly("default", "long", "never", "short");
        advance(1);
        assertThat(sessions.findById("short")).isEmpty();
        assertThat(ids("bo")).containsExactly("default", "long", "never");

        advance(Session.DEFAULT_TTL - 10);
        assertThat(ids("bo")).containsExactly("long", "never");
        advance(119 - Session.DEFAULT_TTL);
        assertThat(sessions.findById("long")).isPresent();
        advance(1);
        assertThat(sessions.findById("long")).isEmpty();
        assertThat(ids("bo")).containsExactly("never");
        advance(1_000_000);
        assertThat(sessions.findById("never")).isPresent();
        assertThat(sessions.count()).isEqualTo(1);
    }

    @Test
    void aSaveRestartsTheTimeToLive() throws Exception {
        Session session = sessions.save(new Session("s", "cy", null));
        advance(50);
        session.setTtl(30); // 50 s after the first write, 30 s from this one
        sessions.save(session);
        advance(29);
        assertThat(sessions.findById("s")).isPresent();
        advance(1);
        assertThat(sessions.findById("s")).isEmpty();
    }

    /** The same container's items, with a `ttl` that Jackson writes even when null. */
    @Container(containerName = Session.CONTAINER, timeToLive = Session.DEFAULT_TTL)
    public static class NullTtlSession {
        @Id
        public String id;
        @PartitionKey
        public String user;
        public Integer ttl;
    }

    @Test
    void anExplicitNullTtlIsRefused() {
        // The service accepts no JSON null for an item's ttl (docs/src/reference/ttl-rules.md, R3):
        // hence Session's @JsonInclude(NON_NULL).
        NullTtlSession item = new NullTtlSession();
        item.id = "n";
        item.user = "di";
        assertThatThrownBy(() -> template.insert(Session.CONTAINER, item))
            .isInstanceOf(CosmosAccessException.class)
            .satisfies(e -> assertThat(((CosmosAccessException) e).getCosmosException().getStatusCode()).isEqualTo(400));
        assertThat(sessions.findById("n")).isEmpty();
    }
}
