// An entity whose items may carry their own time to live. azure-spring-data-cosmos
// has no annotation for the item's `ttl`: it is a plain property named `ttl`
// (the service reads that name), left out of the JSON when null
// (@JsonInclude): an item without `ttl` takes the container's default,
// and the service does not accept an explicit "ttl": null.
package cosmos.springtests;

import com.azure.spring.data.cosmos.core.mapping.Container;
import com.azure.spring.data.cosmos.core.mapping.PartitionKey;
import com.fasterxml.jackson.annotation.JsonInclude;
import org.springframework.data.annotation.Id;

@Container(containerName = Session.CONTAINER, timeToLive = Session.DEFAULT_TTL)
public class Session {
    public static final String CONTAINER = "sessions";
    public static final int DEFAULT_TTL = 60;

    @Id
    private String id;
    @PartitionKey
    private String user;
    /** Seconds after the last write; -1 never expires; null: the container's default. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    private Integer ttl;

    public Session() {}

    public Session(String id, String user, Integer ttl) {
        this.id = id;
        this.user = user;
        this.ttl = ttl;
    }

    public String getId() {
        return id;
    }

    public void setId(String id) {
        this.id = id;
    }

    public String getUser() {
        return user;
    }

    public void setUser(String user) {
        this.user = user;
    }

    public Integer getTtl() {
        return ttl;
    }

    public void setTtl(Integer ttl) {
        this.ttl = ttl;
    }
}
