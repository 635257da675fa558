// The change feed through azcosmos's ReadChangeFeed (latest version, the
// only mode it reads): from the beginning of a feed range, from a point in
// time (StartFrom), scoped to a partition key, and resumed from the
// composite continuation token it returns. Each live item appears once, in
// its latest version; deletes never do.
package sdktests

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// drain reads the change feed from options until a read returns nothing;
// the items' "id=n" in the order read, and the last continuation.
func drain(t *testing.T, items *azcosmos.ContainerClient, options azcosmos.ChangeFeedOptions) ([]string, string) {
	t.Helper()
	var got []string
	for range 100 {
		response := must[azcosmos.ChangeFeedResponse](t)(items.ReadChangeFeed(context.Background(), &options))
		if response.ContinuationToken == "" {
			t.Fatal("a change feed answer without a continuation token")
		}
		for _, raw := range response.Items {
			d := doc(t, raw)
			if _, ok := d["_lsn"]; !ok {
				t.Fatalf("a change without _lsn: %s", raw)
			}
			got = append(got, fmt.Sprintf("%v=%v", d["id"], d["n"]))
		}
		token := response.ContinuationToken
		// The composite token holds no start for the ranges not read yet:
		// StartFrom goes with it (azcosmos sends both headers).
		options = azcosmos.ChangeFeedOptions{Continuation: &token, PartitionKey: options.PartitionKey,
			MaxItemCount: options.MaxItemCount, StartFrom: options.StartFrom}
		if response.Count == 0 && len(response.Items) == 0 {
			return got, token
		}
	}
	t.Fatal("the change feed never ran dry")
	return nil, ""
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestChangeFeed(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		database := e.NewDatabase(t, e.Client(t))
		throughput := azcosmos.NewManualThroughputProperties(18000)
		items := NewContainer(t, database, azcosmos.ContainerProperties{
			ID:                     "feed",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		}, &azcosmos.CreateContainerOptions{ThroughputProperties: &throughput})
		ranges := must[[]azcosmos.FeedRange](t)(items.ReadFeedRanges(ctx, nil))
		if len(ranges) < 2 {
			t.Fatalf("%d feed ranges, want several", len(ranges))
		}
		// One range covering the container, from the first range's start to the last's end.
		whole := azcosmos.FeedRange{MinInclusive: ranges[0].MinInclusive, MaxExclusive: ranges[len(ranges)-1].MaxExclusive}

		start := e.Now(t)
		write := func(id string, n int) {
			p := "p" + id
			must[azcosmos.ItemResponse](t)(items.UpsertItem(ctx, azcosmos.NewPartitionKeyString(p), jsonBytes(t, map[string]any{"id": id, "pk": p, "n": n}), nil))
		}
		for i := range 12 {
			write(fmt.Sprint(i), 0)
		}
		write("3", 1) // a replace: item 3 once, in its latest version
		must[azcosmos.ItemResponse](t)(items.DeleteItem(ctx, azcosmos.NewPartitionKeyString("p5"), "5", nil))

		want := sorted([]string{"0=0", "1=0", "2=0", "3=1", "4=0", "6=0", "7=0", "8=0", "9=0", "10=0", "11=0"})
		got, continuation := drain(t, items, azcosmos.ChangeFeedOptions{FeedRange: &whole, MaxItemCount: 3})
		if !reflect.DeepEqual(sorted(got), want) {
			t.Fatalf("from the beginning: %v", got)
		}

		// Per feed range: together, every change once.
		var perRange []string
		for _, r := range ranges {
			r := r
			got, _ := drain(t, items, azcosmos.ChangeFeedOptions{FeedRange: &r})
			perRange = append(perRange, got...)
		}
		if !reflect.DeepEqual(sorted(perRange), want) {
			t.Fatalf("range by range: %v", perRange)
		}

		// Scoped to one partition key.
		p7 := azcosmos.NewPartitionKeyString("p7")
		if got, _ := drain(t, items, azcosmos.ChangeFeedOptions{FeedRange: &whole, PartitionKey: &p7}); !reflect.DeepEqual(got, []string{"7=0"}) {
			t.Fatalf("partition key p7: %v", got)
		}

		// From the continuation: only what changed since.
		e.Advance(t, 10)
		write("1", 2)
		write("20", 0)
		got, continuation = drain(t, items, azcosmos.ChangeFeedOptions{Continuation: &continuation})
		if !reflect.DeepEqual(sorted(got), []string{"1=2", "20=0"}) {
			t.Fatalf("from the continuation: %v", got)
		}
		if got, _ := drain(t, items, azcosmos.ChangeFeedOptions{Continuation: &continuation}); len(got) != 0 {
			t.Fatalf("nothing changed since: %v", got)
		}

		// From a point in time (If-Modified-Since) of the emulator's clock:
		// what was written before it is left out.
		since := time.Unix(start+5, 0)
		got, _ = drain(t, items, azcosmos.ChangeFeedOptions{FeedRange: &whole, StartFrom: &since})
		if !reflect.DeepEqual(sorted(got), []string{"1=2", "20=0"}) {
			t.Fatalf("from %v: %v", since, got)
		}
		for _, r := range ranges {
			r := r
			got, _ := drain(t, items, azcosmos.ChangeFeedOptions{FeedRange: &r, StartFrom: &since})
			for _, change := range got {
				if change != "1=2" && change != "20=0" {
					t.Fatalf("range %v from %v: %v", r, since, got)
				}
			}
		}
	})
}
