// The Go quick start's first test: an item expires through the test clock.
package quickstart

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// ANCHOR: test
func TestItemsExpire(t *testing.T) {
	ctx := context.Background()
	endpoint := startEmulator(t)

	credential, err := azcosmos.NewKeyCredential(key)
	if err != nil {
		t.Fatal(err)
	}
	client, err := azcosmos.NewClientWithKey(endpoint, credential, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "app"}, nil); err != nil {
		t.Fatal(err)
	}
	database, _ := client.NewDatabase("app")
	defaultTTL := int32(60) // every item expires 60 s after its last write
	_, err = database.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     "items",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		DefaultTimeToLive:      &defaultTTL,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := database.NewContainer("items")
	pk := azcosmos.NewPartitionKeyString("a")
	if _, err := items.CreateItem(ctx, pk, []byte(`{"id": "1", "pk": "a"}`), nil); err != nil {
		t.Fatal(err)
	}

	advance(t, http.DefaultClient, endpoint, 59) // 59 s pass at once
	if _, err := items.ReadItem(ctx, pk, "1", nil); err != nil {
		t.Fatalf("after 59 s: %v", err)
	}
	advance(t, http.DefaultClient, endpoint, 1) // the 60th second: expired
	_, err = items.ReadItem(ctx, pk, "1", nil)
	var notFound *azcore.ResponseError
	if !errors.As(err, &notFound) || notFound.StatusCode != http.StatusNotFound {
		t.Fatalf("after 60 s: %v, want a 404", err)
	}
}

// ANCHOR_END: test
