// Time to live through azcosmos, on the emulator's test clock (nothing
// sleeps): an item expires exactly at _ts + ttl (R5: there the second
// before, gone at that second) from the point read (404), queries and the
// change feed (latest version: an expired item is not there), with the
// container's default or its own ttl; ttl -1 never expires; and the
// documentation's tables E1-E3 (docs/src/ttl.md,
// fixtures/cases/1-examples.toml).
package sdktests

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// visible checks the item id in partition "p" on every read path: the
// point read, a query, COUNT, and the change feed from the beginning.
func visible(t *testing.T, items *azcosmos.ContainerClient, id string, want bool, when string) {
	t.Helper()
	ctx := context.Background()
	pk := azcosmos.NewPartitionKeyString("p")
	_, err := items.ReadItem(ctx, pk, id, nil)
	switch {
	case want && err != nil:
		t.Fatalf("%s: read %s: %v", when, id, err)
	case !want && statusOf(err) != http.StatusNotFound:
		t.Fatalf("%s: read %s: %v, want a 404", when, id, err)
	}
	parameters := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@id", Value: id}}}
	queried := queryAll(t, items, "SELECT VALUE c.id FROM c WHERE c.id = @id", pk, parameters)
	count := queryAll(t, items, "SELECT VALUE COUNT(1) FROM c WHERE c.id = @id", pk, parameters)
	across := queryAll(t, items, "SELECT VALUE c.id FROM c WHERE c.id = @id", azcosmos.NewPartitionKey(), parameters)
	ranges := must[[]azcosmos.FeedRange](t)(items.ReadFeedRanges(ctx, nil))
	inFeed := 0
	for _, r := range ranges {
		r := r
		changes, _ := drain(t, items, azcosmos.ChangeFeedOptions{FeedRange: &r})
		for _, change := range changes {
			if len(change) > len(id) && change[:len(id)+1] == id+"=" {
				inFeed++
			}
		}
	}
	n := 0
	if want {
		n = 1
	}
	if len(queried) != n || len(across) != n || !reflect.DeepEqual(count, []any{float64(n)}) || inFeed != n {
		t.Fatalf("%s: %s: query %v, across partitions %v, COUNT %v, change feed %d; want it %s",
			when, id, queried, across, count, inFeed, map[bool]string{true: "there", false: "gone"}[want])
	}
}

func TestItemsExpireAtTsPlusTtl(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		database := e.NewDatabase(t, e.Client(t))
		defaultTTL := int32(100)
		items := NewContainer(t, database, azcosmos.ContainerProperties{
			ID:                     "ttl",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
			DefaultTimeToLive:      &defaultTTL,
		}, nil)
		pk := azcosmos.NewPartitionKeyString("p")
		create := func(item map[string]any) int64 {
			item["pk"] = "p"
			response := must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, pk, jsonBytes(t, item), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}))
			return int64(doc(t, response.Value)["_ts"].(float64))
		}
		ts := create(map[string]any{"id": "inherits", "n": 1})
		if ts != e.Now(t) {
			t.Fatalf("_ts %d, the test clock %d", ts, e.Now(t))
		}
		create(map[string]any{"id": "own", "ttl": 30, "n": 1})
		create(map[string]any{"id": "never", "ttl": -1, "n": 1})

		e.Advance(t, 29)
		visible(t, items, "own", true, "at _ts + 29")
		e.Advance(t, 1)
		visible(t, items, "own", false, "at _ts + 30 (its own ttl)")
		visible(t, items, "inherits", true, "at _ts + 30")
		// Gone means gone: a replace, a patch or a delete is 404; the id is free.
		_, err := items.ReplaceItem(ctx, pk, "own", jsonBytes(t, map[string]any{"id": "own", "pk": "p"}), nil)
		wantStatus(t, err, http.StatusNotFound, "a replace of an expired item")
		var ops azcosmos.PatchOperations
		ops.AppendSet("/n", 2)
		_, err = items.PatchItem(ctx, pk, "own", ops, nil)
		wantStatus(t, err, http.StatusNotFound, "a patch of an expired item")
		_, err = items.DeleteItem(ctx, pk, "own", nil)
		wantStatus(t, err, http.StatusNotFound, "a delete of an expired item")

		e.Advance(t, ts+99-e.Now(t))
		visible(t, items, "inherits", true, "at _ts + 99")
		e.Advance(t, 1)
		visible(t, items, "inherits", false, "at _ts + 100 (the container's default)")
		// The background purge may have removed them already: the count is
		// not checked, only that they stay gone.
		e.Purge(t)
		visible(t, items, "inherits", false, "after the purge")
		visible(t, items, "never", true, "at _ts + 100, ttl -1")
		e.Advance(t, 1_000_000)
		visible(t, items, "never", true, "a million seconds later, ttl -1")

		// The id of an expired item can be created again, with a new countdown.
		again := create(map[string]any{"id": "own", "ttl": 30, "n": 2})
		if again != e.Now(t) {
			t.Fatalf("the new item's _ts: %d", again)
		}
		visible(t, items, "own", true, "created again")

		// Any write restarts the countdown (an upsert at _ts + 20).
		e.Advance(t, 20)
		must[azcosmos.ItemResponse](t)(items.UpsertItem(ctx, pk, jsonBytes(t, map[string]any{"id": "own", "pk": "p", "ttl": 30, "n": 3}), nil))
		e.Advance(t, 29)
		visible(t, items, "own", true, "29 s after the upsert")
		e.Advance(t, 1)
		visible(t, items, "own", false, "30 s after the upsert")
	})
}

// The documentation's example tables: the container's defaultTtl and the
// item's ttl ("null": no property at all, as the SDKs send a null), each
// row's outcome checked the second before and at the expiry instant.
func TestTtlTables(t *testing.T) {
	rows := []struct {
		id           string
		defaultTTL   *int32
		itemTTL      *int32
		expiresAfter int64 // 0: never
	}{
		{"E1.1", nil, nil, 0},
		{"E1.2", nil, ptr(-1), 0},
		{"E1.3", nil, ptr(2000), 0},
		{"E2.1", ptr(-1), nil, 0},
		{"E2.2", ptr(-1), ptr(-1), 0},
		{"E2.3", ptr(-1), ptr(2000), 2000},
		{"E3.1", ptr(1000), nil, 1000},
		{"E3.2", ptr(1000), ptr(-1), 0},
		{"E3.3", ptr(1000), ptr(2000), 2000},
	}
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		database := e.NewDatabase(t, e.Client(t))
		for _, row := range rows {
			t.Run(row.id, func(t *testing.T) {
				ctx := context.Background()
				items := NewContainer(t, database, azcosmos.ContainerProperties{
					ID:                     "c" + row.id,
					PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
					DefaultTimeToLive:      row.defaultTTL,
				}, nil)
				got := must[azcosmos.ContainerResponse](t)(items.Read(ctx, nil)).ContainerProperties.DefaultTimeToLive
				if (got == nil) != (row.defaultTTL == nil) || (got != nil && *got != *row.defaultTTL) {
					t.Fatalf("defaultTtl read back: %v", got)
				}
				item := map[string]any{"id": "a", "pk": "p", "n": 0}
				if row.itemTTL != nil {
					item["ttl"] = *row.itemTTL
				}
				created := must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, azcosmos.NewPartitionKeyString("p"), jsonBytes(t, item), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}))
				ts := int64(doc(t, created.Value)["_ts"].(float64))
				visible(t, items, "a", true, row.id+" at _ts")
				if row.expiresAfter == 0 {
					e.Advance(t, 3000)
					visible(t, items, "a", true, row.id+" 3000 s later")
					return
				}
				e.Advance(t, ts+row.expiresAfter-1-e.Now(t))
				visible(t, items, "a", true, row.id+" the second before _ts + ttl")
				e.Advance(t, 1)
				visible(t, items, "a", false, row.id+" at _ts + ttl")
				e.Purge(t)
				visible(t, items, "a", false, row.id+" after the purge")
			})
		}
	})
}

func ptr(n int32) *int32 { return &n }
