// A CosmosRepository against the emulator: the container Spring Data creates
// (its partition key and defaultTtl from the annotations), CRUD with ETags,
// derived queries, sorting, paging with continuations, and an @Query.
// The expectations are the Cosmos DB NoSQL query language's and Spring
// Data's documented semantics over the seven purchases below.
package cosmos.springtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.PartitionKey;
import com.azure.spring.data.cosmos.core.query.CosmosPageRequest;
import com.azure.spring.data.cosmos.exception.CosmosAccessException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.domain.Sort;

class PurchaseRepositoryTest extends EmulatorTest {
    private static final List<Purchase> SEED = List.of(
        new Purchase("p1", "ada", "open", 10),
        new Purchase("p2", "ada", "shipped", 25),
        new Purchase("p3", "ada", "open", 40),
        new Purchase("p4", "bob", "open", 15),
        new Purchase("p5", "bob", "cancelled", 30),
        new Purchase("p6", "cyd", "shipped", 55),
        new Purchase("p7", "cyd", "open", 5));

    @Autowired
    PurchaseRepository purchases;

    /** The client Spring built from CosmosTestConfig's builder. */
    @Autowired
    CosmosAsyncClient client;

    @BeforeEach
    void seed() {
        purchases.deleteAll();
        purchases.saveAll(SEED);
    }

    private static List<String> ids(Iterable<Purchase> found) {
        List<String> ids = new ArrayList<>();
        found.forEach(p -> ids.add(p.getId()));
        return ids;
    }

    @Test
    void theContainerIsCreatedWithThePartitionKeyAndDefaultTtlOfTheAnnotations() {
        CosmosContainerProperties properties = client.getDatabase(CosmosTestConfig.DATABASE)
            .getContainer(Purchase.CONTAINER).read().block().getProperties();
        assertThat(properties.getPartitionKeyDefinition().getPaths()).containsExactly("/customer");
        assertThat(properties.getDefaultTimeToLiveInSeconds()).isEqualTo(Purchase.DEFAULT_TTL);
    }

    @Test
    void createReadUpdateDelete() {
        assertThat(purchases.count()).isEqualTo(7);
        Purchase p1 = purchases.findById("p1", new PartitionKey("ada")).orElseThrow();
        assertThat(p1).isEqualTo(SEED.get(0));
        assertThat(p1.get_etag()).isNotBlank();

        p1.setStatus("shipped");
        Purchase saved = purchases.save(p1);
        assertThat(saved.get_etag()).isNotBlank().isNotEqualTo(SEED.get(0).get_etag());
        assertThat(purchases.findById("p1").orElseThrow().getStatus()).isEqualTo("shipped");

        Purchase extra = purchases.save(new Purchase("p8", "dee", "open", 70));
        assertThat(purchases.existsById("p8")).isTrue();
        assertThat(ids(purchases.findAllById(List.of("p8", "p1", "none")))).containsExactlyInAnyOrder("p1", "p8");

        purchases.deleteById("p8", new PartitionKey("dee"));
        assertThat(purchases.findById("p8")).isEmpty();
        purchases.delete(purchases.findById("p2").orElseThrow());
        assertThat(purchases.existsById("p2")).isFalse();
        assertThat(purchases.count()).isEqualTo(6);
        assertThat(extra.getId()).isEqualTo("p8");
    }

    @Test
    void aSaveWithAStaleEtagIsRefusedWithPreconditionFailed() {
        Purchase first = purchases.findById("p4").orElseThrow();
        Purchase second = purchases.findById("p4").orElseThrow();
        first.setTotal(16);
        purchases.save(first);
        second.setTotal(17);
        assertThatThrownBy(() -> purchases.save(second))
            .isInstanceOf(CosmosAccessException.class)
            .satisfies(e -> assertThat(((CosmosAccessException) e).getCosmosException().getStatusCode()).isEqualTo(412));
        assertThat(purchases.findById("p4").orElseThrow().getTotal()).isEqualTo(16);
    }

    @Test
    void derivedQueries() {
        assertThat(ids(purchases.findByCustomer("ada"))).containsExactlyInAnyOrder("p1", "p2", "p3");
        assertThat(ids(purchases.findByCustomerAndStatus("ada", "open"))).containsExactlyInAnyOrder("p1", "p3");
        assertThat(purchases.countByStatus("open")).isEqualTo(4);
        assertThat(purchases.countByStatus("lost")).isZero();
        assertThat(purchases.existsByCustomerAndStatus("bob", "cancelled")).isTrue();
        assertThat(purchases.existsByCustomerAndStatus("bob", "shipped")).isFalse();
        assertThat(ids(purchases.findByStatusIn(List.of("shipped", "cancelled"))))
            .containsExactlyInAnyOrder("p2", "p5", "p6");
        // BETWEEN is inclusive at both ends.
        assertThat(ids(purchases.findByTotalBetween(15, 30))).containsExactlyInAnyOrder("p2", "p4", "p5");
        assertThat(ids(purchases.findByTotalGreaterThanOrderByTotalDesc(25))).containsExactly("p6", "p3", "p5");
    }

    @Test
    void sorting() {
        assertThat(ids(purchases.findByCustomer("ada", Sort.by(Sort.Direction.DESC, "total"))))
            .containsExactly("p3", "p2", "p1");
        assertThat(ids(purchases.findAll(Sort.by("total")))).containsExactly("p7", "p1", "p4", "p2", "p5", "p3", "p6");
        assertThat(ids(purchases.findAll(Sort.by(Sort.Direction.DESC, "status").and(Sort.by("total")))))
            .containsExactly("p2", "p6", "p7", "p1", "p4", "p3", "p5");
    }

    @Test
    void pagesFollowTheContinuationAcrossPartitions() {
        Pageable request = CosmosPageRequest.of(0, 3, null, Sort.by("total"));
        List<List<String>> pages = new ArrayList<>();
        while (true) {
            Page<Purchase> page = purchases.findAll(request);
            pages.add(ids(page));
            assertThat(page.getTotalElements()).isEqualTo(7);
            if (!page.hasNext()) {
                break;
            }
            request = page.nextPageable();
            assertThat(((CosmosPageRequest) request).getRequestContinuation()).isNotBlank();
        }
        assertThat(pages).containsExactly(List.of("p7", "p1", "p4"), List.of("p2", "p5", "p3"), List.of("p6"));
    }

    @Test
    void aContinuationResumesInANewRequest() {
        Sort byTotal = Sort.by(Sort.Direction.DESC, "total");
        Page<Purchase> first = purchases.findByStatus("open", CosmosPageRequest.of(0, 2, null, byTotal));
        assertThat(ids(first)).containsExactly("p3", "p4");
        assertThat(first.hasNext()).isTrue();
        // As a web application does: the continuation string travels, with
        // the page's offset (CosmosPageImpl.hasNext counts from it).
        String continuation = ((CosmosPageRequest) first.nextPageable()).getRequestContinuation();
        Page<Purchase> second = purchases.findByStatus("open", CosmosPageRequest.of(2, 1, 2, continuation, byTotal));
        assertThat(ids(second)).containsExactly("p1", "p7");
        assertThat(second.hasNext()).isFalse();
    }

    @Test
    void anAnnotatedQuery() {
        assertThat(ids(purchases.largePurchases("ada", 20))).containsExactly("p3", "p2");
        assertThat(purchases.largePurchases("bob", 100)).isEmpty();
        assertThat(Set.copyOf(ids(purchases.largePurchases("cyd", 0)))).isEqualTo(Set.of("p6", "p7"));
    }
}
