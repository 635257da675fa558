// An entity of a container that Spring Data creates: `purchases`, partitioned
// on /customer (@PartitionKey), with a default time to live of one hour
// (@Container's timeToLive, the container's defaultTtl), and a composite
// index for sorting on status then total (the service refuses an ORDER BY
// on two properties without one).
package cosmos.springtests;

import com.azure.cosmos.models.CompositePathSortOrder;
import com.azure.spring.data.cosmos.core.mapping.CompositeIndex;
import com.azure.spring.data.cosmos.core.mapping.CompositeIndexPath;
import com.azure.spring.data.cosmos.core.mapping.Container;
import com.azure.spring.data.cosmos.core.mapping.CosmosIndexingPolicy;
import com.azure.spring.data.cosmos.core.mapping.PartitionKey;
import java.util.Objects;
import org.springframework.data.annotation.Id;
import org.springframework.data.annotation.Version;

@CosmosIndexingPolicy(compositeIndexes = @CompositeIndex(paths = {
    @CompositeIndexPath(path = "/status", order = CompositePathSortOrder.DESCENDING),
    @CompositeIndexPath(path = "/total")}))
@Container(containerName = Purchase.CONTAINER, timeToLive = Purchase.DEFAULT_TTL)
public class Purchase {
    public static final String CONTAINER = "purchases";
    public static final int DEFAULT_TTL = 3600;

    @Id
    private String id;
    @PartitionKey
    private String customer;
    private String status;
    private int total;
    /** The item's _etag: saves send it as If-Match. */
    @Version
    private String _etag;

    public Purchase() {}

    public Purchase(String id, String customer, String status, int total) {
        this.id = id;
        this.customer = customer;
        this.status = status;
        this.total = total;
    }

    public String getId() {
        return id;
    }

    public void setId(String id) {
        this.id = id;
    }

    public String getCustomer() {
        return customer;
    }

    public void setCustomer(String customer) {
        this.customer = customer;
    }

    public String getStatus() {
        return status;
    }

    public void setStatus(String status) {
        this.status = status;
    }

    public int getTotal() {
        return total;
    }

    public void setTotal(int total) {
        this.total = total;
    }

    public String get_etag() {
        return _etag;
    }

    public void set_etag(String etag) {
        this._etag = etag;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Purchase p && Objects.equals(id, p.id) && Objects.equals(customer, p.customer)
            && Objects.equals(status, p.status) && total == p.total;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, customer, status, total);
    }

    @Override
    public String toString() {
        return "Purchase(" + id + ", " + customer + ", " + status + ", " + total + ")";
    }
}
