// The image started by Testcontainers for Go's Cosmos DB module
// (github.com/testcontainers/testcontainers-go/modules/azure/cosmosdb
// v0.44.0), used as its documentation shows (golang.testcontainers.org/
// modules/azure, "CosmosDB"; the module's ExampleRun_connect), with one
// change: the image, from COSMOS_EMULATOR_IMAGE.
//
// What the module does, read from its source (cosmosdb.go, policy.go):
// exposes 8081 (a random host port), passes `--enable-explorer false` as
// the container's arguments, waits for a log line containing "Started" and
// for the port to listen, and hands out an http:// connection string with
// the well-known key; its ContainerPolicy pins every request to that
// address.
//
// Run by `cargo xtask image --test` through podman's Docker API
// (DOCKER_HOST), Ryuk off (TESTCONTAINERS_RYUK_DISABLED=true).
package cosmosdb_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/azure/cosmosdb"
)

func image() string {
	if image := os.Getenv("COSMOS_EMULATOR_IMAGE"); image != "" {
		return image
	}
	return "ghcr.io/owner/cosmos-emulator"
}

func TestTheDocumentedUsage(t *testing.T) {
	ctx := context.Background()

	// ANCHOR: usage
	cosmosdbContainer, err := cosmosdb.Run(ctx, image())
	defer func() {
		if err := testcontainers.TerminateContainer(cosmosdbContainer); err != nil {
			t.Logf("failed to terminate container: %s", err)
		}
	}()
	if err != nil {
		t.Fatalf("failed to start container: %s", err)
	}

	connString, err := cosmosdbContainer.ConnectionString(ctx)
	if err != nil {
		t.Fatalf("failed to get connection string: %s", err)
	}

	p, err := cosmosdb.NewContainerPolicy(ctx, cosmosdbContainer)
	if err != nil {
		t.Fatalf("failed to create policy: %s", err)
	}

	client, err := azcosmos.NewClientFromConnectionString(connString, p.ClientOptions())
	if err != nil {
		t.Fatalf("failed to create cosmosdb client: %s", err)
	}

	createDatabaseResp, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "myDatabase"}, nil)
	if err != nil {
		t.Fatalf("failed to create database: %s", err)
	}
	// ANCHOR_END: usage

	if createDatabaseResp.RawResponse.StatusCode != http.StatusCreated {
		t.Fatalf("create database: %d, want 201", createDatabaseResp.RawResponse.StatusCode)
	}
	if !strings.HasPrefix(connString, "AccountEndpoint=http://") {
		t.Fatalf("the module's connection string: %s", connString)
	}
	// The module turned the explorer off with `--enable-explorer false`.
	endpoint := strings.TrimSuffix(strings.TrimPrefix(strings.Split(connString, ";")[0], "AccountEndpoint="), "/")
	explorer, err := http.Get(endpoint + "/_explorer/index.html")
	if err != nil {
		t.Fatal(err)
	}
	explorer.Body.Close()
	if explorer.StatusCode != http.StatusNotFound {
		t.Fatalf("the explorer answered %d with --enable-explorer false, want 404", explorer.StatusCode)
	}
}

func TestAnItemExpiresThroughTheTestClock(t *testing.T) {
	ctx := context.Background()
	// WithEnv is testcontainers-go's documented way to add a variable; the
	// emulator's clock then stands still until moved.
	// ANCHOR: clock
	cosmosdbContainer, err := cosmosdb.Run(ctx, image(),
		testcontainers.WithEnv(map[string]string{"COSMOS_EMULATOR_CLOCK": "manual"}))
	// ANCHOR_END: clock
	defer func() {
		if err := testcontainers.TerminateContainer(cosmosdbContainer); err != nil {
			t.Logf("failed to terminate container: %s", err)
		}
	}()
	if err != nil {
		t.Fatalf("failed to start container: %s", err)
	}
	connString, err := cosmosdbContainer.ConnectionString(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := cosmosdb.NewContainerPolicy(ctx, cosmosdbContainer)
	if err != nil {
		t.Fatal(err)
	}
	client, err := azcosmos.NewClientFromConnectionString(connString, p.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}

	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "ttl"}, nil); err != nil {
		t.Fatal(err)
	}
	database, err := client.NewDatabase("ttl")
	if err != nil {
		t.Fatal(err)
	}
	defaultTTL := int32(60)
	_, err = database.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     "items",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		DefaultTimeToLive:      &defaultTTL,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	items, err := database.NewContainer("items")
	if err != nil {
		t.Fatal(err)
	}
	pk := azcosmos.NewPartitionKeyString("a")
	if _, err := items.CreateItem(ctx, pk, []byte(`{"id": "a", "pk": "a"}`), nil); err != nil {
		t.Fatal(err)
	}

	endpoint := strings.TrimPrefix(strings.Split(connString, ";")[0], "AccountEndpoint=")
	advance(t, endpoint, 59)
	if got := ids(t, ctx, items); len(got) != 1 || got[0] != "a" {
		t.Fatalf("after 59 s: %v, want [a]", got)
	}
	if _, err := items.ReadItem(ctx, pk, "a", nil); err != nil {
		t.Fatalf("after 59 s: %s", err)
	}

	advance(t, endpoint, 1) // the 60th second: expired
	if got := ids(t, ctx, items); len(got) != 0 {
		t.Fatalf("after 60 s: %v, want none", got)
	}
	_, err = items.ReadItem(ctx, pk, "a", nil)
	var responseErr *azcore.ResponseError
	if !errors.As(err, &responseErr) || responseErr.StatusCode != http.StatusNotFound {
		t.Fatalf("read after 60 s: %v, want a 404", err)
	}
}

func ids(t *testing.T, ctx context.Context, items *azcosmos.ContainerClient) []string {
	t.Helper()
	pager := items.NewQueryItemsPager("SELECT VALUE c.id FROM c", azcosmos.NewPartitionKeyString("a"), nil)
	found := []string{}
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Items {
			var id string
			if err := json.Unmarshal(raw, &id); err != nil {
				t.Fatal(err)
			}
			found = append(found, id)
		}
	}
	return found
}

// advance POSTs /_emulator/clock {"advance": seconds}, signed with the
// account key as an account read is.
func advance(t *testing.T, endpoint string, seconds int) {
	t.Helper()
	const key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
	secret, _ := base64.StdEncoding.DecodeString(key)
	date := time.Now().UTC().Format(http.TimeFormat)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("post\n\n\n" + strings.ToLower(date) + "\n\n"))
	token := "type=master&ver=1.0&sig=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))

	body, _ := json.Marshal(map[string]int{"advance": seconds})
	request, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(endpoint, "/")+"/_emulator/clock", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("x-ms-date", date)
	request.Header.Set("authorization", url.QueryEscape(token))
	request.Header.Set("content-type", "application/json")
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		t.Fatalf("POST /_emulator/clock: %d", response.StatusCode)
	}
}
