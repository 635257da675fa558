// The repository of Session: derived queries by user.
package cosmos.springtests;

import com.azure.spring.data.cosmos.repository.CosmosRepository;
import java.util.List;

public interface SessionRepository extends CosmosRepository<Session, String> {
    List<Session> findByUser(String user);

    long countByUser(String user);
}
