// A CosmosRepository: CRUD, queries derived from method names, paging and
// sorting, and an annotated query.
package cosmos.springtests;

import com.azure.spring.data.cosmos.repository.CosmosRepository;
import com.azure.spring.data.cosmos.repository.Query;
import java.util.Collection;
import java.util.List;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.domain.Sort;
import org.springframework.data.repository.query.Param;

public interface PurchaseRepository extends CosmosRepository<Purchase, String> {
    List<Purchase> findByCustomer(String customer);

    List<Purchase> findByCustomerAndStatus(String customer, String status);

    long countByStatus(String status);

    boolean existsByCustomerAndStatus(String customer, String status);

    List<Purchase> findByStatusIn(Collection<String> statuses);

    List<Purchase> findByTotalBetween(int low, int high);

    List<Purchase> findByTotalGreaterThanOrderByTotalDesc(int total);

    List<Purchase> findByCustomer(String customer, Sort sort);

    Page<Purchase> findByStatus(String status, Pageable pageable);

    @Query("SELECT * FROM c WHERE c.customer = @customer AND c.total >= @min ORDER BY c.total DESC")
    List<Purchase> largePurchases(@Param("customer") String customer, @Param("min") int min);
}
