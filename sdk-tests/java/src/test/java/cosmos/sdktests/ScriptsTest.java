// Server-side JavaScript through the SDK: a stored procedure that writes
// (and one that throws, whose writes are rolled back) and a user-defined
// function used in a query.
package cosmos.sdktests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.cosmos.CosmosContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.CosmosStoredProcedureProperties;
import com.azure.cosmos.models.CosmosStoredProcedureRequestOptions;
import com.azure.cosmos.models.CosmosStoredProcedureResponse;
import com.azure.cosmos.models.CosmosUserDefinedFunctionProperties;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ScriptsTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static final String CREATE_TWO = String.join("\n",
        "function createTwo(prefix) {",
        "  var c = getContext().getCollection();",
        "  var ok = c.createDocument(c.getSelfLink(), {id: prefix + '1', pk: 's', n: 1}, function (err) {",
        "    if (err) throw err;",
        "    c.createDocument(c.getSelfLink(), {id: prefix + '2', pk: 's', n: 2}, function (err2) {",
        "      if (err2) throw err2;",
        "      getContext().getResponse().setBody({made: [prefix + '1', prefix + '2']});",
        "    });",
        "  });",
        "  if (!ok) throw new Error('not accepted');",
        "}");

    static final String WRITE_THEN_THROW = String.join("\n",
        "function writeThenThrow() {",
        "  var c = getContext().getCollection();",
        "  c.createDocument(c.getSelfLink(), {id: 'ghost', pk: 's'}, function (err) {",
        "    if (err) throw err;",
        "    throw new Error('changed my mind');",
        "  });",
        "}");

    @Test
    void storedProcedures() {
        try (Db db = new Db("sprocs")) {
            CosmosContainer items = db.container("items");
            items.getScripts().createStoredProcedure(new CosmosStoredProcedureProperties("createTwo", CREATE_TWO));
            items.getScripts().createStoredProcedure(new CosmosStoredProcedureProperties("writeThenThrow", WRITE_THEN_THROW));
            List<String> listed = items.getScripts().readAllStoredProcedures().stream()
                .map(CosmosStoredProcedureProperties::getId).sorted().collect(Collectors.toList());
            assertEquals(List.of("createTwo", "writeThenThrow"), listed);

            CosmosStoredProcedureRequestOptions options = new CosmosStoredProcedureRequestOptions();
            options.setPartitionKey(new PartitionKey("s"));
            CosmosStoredProcedureResponse response = items.getScripts().getStoredProcedure("createTwo")
                .execute(List.of("x"), options);
            assertEquals(200, response.getStatusCode());
            assertEquals("{\"made\":[\"x1\",\"x2\"]}", response.getResponseAsString().replace(" ", ""));
            assertEquals(2, items.readItem("x2", new PartitionKey("s"), ObjectNode.class).getItem().get("n").asInt());

            CosmosException thrown = assertThrows(CosmosException.class,
                () -> items.getScripts().getStoredProcedure("writeThenThrow").execute(List.of(), options));
            assertEquals(400, thrown.getStatusCode());
            CosmosException ghost = assertThrows(CosmosException.class,
                () -> items.readItem("ghost", new PartitionKey("s"), ObjectNode.class));
            assertEquals(404, ghost.getStatusCode());

            items.getScripts().getStoredProcedure("writeThenThrow").delete();
            CosmosException deleted = assertThrows(CosmosException.class,
                () -> items.getScripts().getStoredProcedure("writeThenThrow").read());
            assertEquals(404, deleted.getStatusCode());
        }
    }

    @Test
    void userDefinedFunction() {
        try (Db db = new Db("udfs")) {
            CosmosContainer items = db.container("items", 12000);
            items.getScripts().createUserDefinedFunction(new CosmosUserDefinedFunctionProperties("tax",
                "function tax(n) { return n * 2 + 1; }"));
            for (int i = 0; i < 10; i++) {
                items.createItem(JSON.createObjectNode().put("id", "u" + i).put("pk", "k" + i).put("n", i));
            }
            List<Integer> taxed = items.queryItems("SELECT VALUE udf.tax(c.n) FROM c ORDER BY c.n",
                new CosmosQueryRequestOptions(), Integer.class).stream().collect(Collectors.toList());
            assertEquals(List.of(1, 3, 5, 7, 9, 11, 13, 15, 17, 19), taxed);
            List<String> filtered = items.queryItems("SELECT VALUE c.id FROM c WHERE udf.tax(c.n) > 15",
                new CosmosQueryRequestOptions(), String.class).stream().sorted().collect(Collectors.toList());
            assertEquals(List.of("u8", "u9"), filtered);
        }
    }
}
