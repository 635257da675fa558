// Queries through azcosmos. The Go SDK has no query pipeline of its own:
// it sends every query to the gateway, with the partition key given or
// across partitions (NewPartitionKey(), the empty key), and the gateway
// serves across partitions only what needs no merging (filters and
// projections); an ORDER BY, TOP, DISTINCT, aggregate... across partitions
// is refused with 400 (the Go SDK's NewQueryItemsPager documentation, and
// the REST API's "Queries that cannot be served by gateway").
package sdktests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

func TestSinglePartitionQueries(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		items := newItems(t, e)
		pk := azcosmos.NewPartitionKeyString("p")
		for i, name := range []string{"d", "b", "e", "a", "c"} {
			must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, pk, jsonBytes(t, map[string]any{"id": name, "pk": "p", "n": i, "tags": []string{name + "1", name + "2"}}), nil))
		}
		must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, azcosmos.NewPartitionKeyString("q"), jsonBytes(t, map[string]any{"id": "z", "pk": "q", "n": 0}), nil))

		// Scoped to partition p: z (in q) never shows.
		if got := queryAll(t, items, "SELECT VALUE c.id FROM c ORDER BY c.id", pk, nil); !reflect.DeepEqual(got, []any{"a", "b", "c", "d", "e"}) {
			t.Fatalf("ORDER BY c.id: %v", got)
		}
		if got := queryAll(t, items, "SELECT VALUE c.id FROM c ORDER BY c.n DESC", pk, nil); !reflect.DeepEqual(got, []any{"c", "a", "e", "b", "d"}) {
			t.Fatalf("ORDER BY c.n DESC: %v", got)
		}
		parameters := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@min", Value: 2}, {Name: "@names", Value: []string{"a", "e", "z"}}}}
		if got := queryAll(t, items, "SELECT VALUE c.id FROM c WHERE c.n >= @min AND ARRAY_CONTAINS(@names, c.id) ORDER BY c.id", pk, parameters); !reflect.DeepEqual(got, []any{"a", "e"}) {
			t.Fatalf("parameters: %v", got)
		}
		got := queryAll(t, items, "SELECT c.id, c.n * 10 AS tenfold, c.tags[1] AS second FROM c WHERE c.id = 'b'", pk, nil)
		if !reflect.DeepEqual(got, []any{map[string]any{"id": "b", "tenfold": 10.0, "second": "b2"}}) {
			t.Fatalf("projection: %v", got)
		}
		if got := queryAll(t, items, "SELECT VALUE COUNT(1) FROM c", pk, nil); !reflect.DeepEqual(got, []any{5.0}) {
			t.Fatalf("COUNT in one partition: %v", got)
		}
		if got := queryAll(t, items, "SELECT VALUE t FROM c JOIN t IN c.tags WHERE c.id = 'a'", pk, nil); !reflect.DeepEqual(got, []any{"a1", "a2"}) {
			t.Fatalf("JOIN: %v", got)
		}
		if got := queryAll(t, items, "SELECT TOP 2 VALUE c.id FROM c ORDER BY c.id DESC", pk, nil); !reflect.DeepEqual(got, []any{"e", "d"}) {
			t.Fatalf("TOP: %v", got)
		}
		if got := queryAll(t, items, "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 1 LIMIT 2", pk, nil); !reflect.DeepEqual(got, []any{"b", "c"}) {
			t.Fatalf("OFFSET LIMIT: %v", got)
		}

		// Paging: PageSizeHint is x-ms-max-item-count; each page's
		// continuation resumes the query, in this pager or in a new one.
		paged := &azcosmos.QueryOptions{PageSizeHint: 2}
		pager := items.NewQueryItemsPager("SELECT VALUE c.id FROM c ORDER BY c.id", pk, paged)
		first := must[azcosmos.QueryItemsResponse](t)(pager.NextPage(ctx))
		if len(first.Items) != 2 || first.ContinuationToken == nil {
			t.Fatalf("first page: %d items, continuation %v", len(first.Items), first.ContinuationToken)
		}
		var sizes []int
		var ids []any
		resumed := items.NewQueryItemsPager("SELECT VALUE c.id FROM c ORDER BY c.id", pk,
			&azcosmos.QueryOptions{PageSizeHint: 2, ContinuationToken: first.ContinuationToken})
		for resumed.More() {
			page := must[azcosmos.QueryItemsResponse](t)(resumed.NextPage(ctx))
			sizes = append(sizes, len(page.Items))
			for _, raw := range page.Items {
				ids = append(ids, doc1(t, raw))
			}
		}
		if !reflect.DeepEqual(sizes, []int{2, 1}) || !reflect.DeepEqual(ids, []any{"c", "d", "e"}) {
			t.Fatalf("resumed: pages %v, ids %v", sizes, ids)
		}
		// The first pager goes on from where it was.
		if rest := pagerIds(t, pager); !reflect.DeepEqual(rest, []any{"c", "d", "e"}) {
			t.Fatalf("the first pager's rest: %v", rest)
		}

		// A query the engine cannot parse: 400, with the service's body.
		_, err := items.NewQueryItemsPager("SELECT FROM WHERE", pk, nil).NextPage(ctx)
		refusal := wantStatus(t, err, http.StatusBadRequest, "a syntax error")
		if code, _ := cosmosError(t, refusal); code != "BadRequest" {
			t.Fatalf("syntax error code %q", code)
		}
	})
}

func doc1(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	ok(t, json.Unmarshal(raw, &v))
	return v
}

func pagerIds(t *testing.T, pager interface {
	More() bool
	NextPage(context.Context) (azcosmos.QueryItemsResponse, error)
}) []any {
	t.Helper()
	out := []any{}
	for pager.More() {
		page := must[azcosmos.QueryItemsResponse](t)(pager.NextPage(context.Background()))
		for _, raw := range page.Items {
			out = append(out, doc1(t, raw))
		}
	}
	return out
}

func TestCrossPartitionQueries(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		database := e.NewDatabase(t, e.Client(t))
		// 18,000 RU/s: three physical partitions, so that across
		// partitions means across ranges.
		throughput := azcosmos.NewManualThroughputProperties(18000)
		items := NewContainer(t, database, azcosmos.ContainerProperties{
			ID:                     "wide",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		}, &azcosmos.CreateContainerOptions{ThroughputProperties: &throughput})
		ranges := must[[]azcosmos.FeedRange](t)(items.ReadFeedRanges(ctx, nil))
		if len(ranges) < 2 {
			t.Fatalf("18,000 RU/s: %d feed ranges, want several", len(ranges))
		}
		for i := range 30 {
			p := fmt.Sprintf("p%d", i%10)
			must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, azcosmos.NewPartitionKeyString(p), jsonBytes(t, map[string]any{"id": fmt.Sprint(i), "pk": p, "n": i}), nil))
		}

		all := azcosmos.NewPartitionKey()
		got := queryAll(t, items, "SELECT VALUE c.n FROM c WHERE c.n >= 20", all, nil)
		sort.Slice(got, func(i, j int) bool { return got[i].(float64) < got[j].(float64) })
		want := []any{}
		for i := 20; i < 30; i++ {
			want = append(want, float64(i))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("a filter across partitions: %v", got)
		}
		projected := queryAll(t, items, "SELECT c.id, c.pk FROM c WHERE c.n = 13", all, nil)
		if !reflect.DeepEqual(projected, []any{map[string]any{"id": "13", "pk": "p3"}}) {
			t.Fatalf("a projection across partitions: %v", projected)
		}
		// With small pages, every item once over however many pages
		// (some may be empty) the gateway answers.
		everything := queryAll(t, items, "SELECT VALUE c.id FROM c", all, &azcosmos.QueryOptions{PageSizeHint: 4})
		if len(everything) != 30 || len(distinct(everything)) != 30 {
			t.Fatalf("every item across partitions in pages of 4: %d (%d distinct)", len(everything), len(distinct(everything)))
		}
		// A filter on the partition key is routed to its partition.
		if got := queryAll(t, items, "SELECT VALUE c.n FROM c WHERE c.pk = 'p4' ORDER BY c.n", all, nil); !reflect.DeepEqual(got, []any{4.0, 14.0, 24.0}) {
			t.Fatalf("a query pinned by its filter: %v", got)
		}

		// What needs merging across partitions the gateway refuses: 400
		// (substatus 1004), which azcosmos hands back as it is.
		for _, query := range []string{
			"SELECT * FROM c ORDER BY c.n",
			"SELECT TOP 3 * FROM c",
			"SELECT VALUE COUNT(1) FROM c",
			"SELECT DISTINCT VALUE c.pk FROM c",
		} {
			_, err := items.NewQueryItemsPager(query, all, nil).NextPage(ctx)
			refusal := wantStatus(t, err, http.StatusBadRequest, query+" across partitions")
			if sub := refusal.RawResponse.Header.Get("x-ms-substatus"); sub != "1004" {
				t.Fatalf("%s across partitions: substatus %q, want 1004", query, sub)
			}
			if code, _ := cosmosError(t, refusal); code != "BadRequest" {
				t.Fatalf("%s: code %q", query, code)
			}
		}
		// The same ORDER BY within one partition runs.
		if got := queryAll(t, items, "SELECT VALUE c.n FROM c ORDER BY c.n DESC", azcosmos.NewPartitionKeyString("p1"), nil); !reflect.DeepEqual(got, []any{21.0, 11.0, 1.0}) {
			t.Fatalf("ORDER BY in one partition: %v", got)
		}
	})
}

func distinct(values []any) map[any]bool {
	seen := map[any]bool{}
	for _, v := range values {
		seen[v] = true
	}
	return seen
}

// Hierarchical partition keys (MultiHash): full keys built with
// AppendString, queries on a prefix through a filter.
func TestHierarchicalPartitionKeys(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		database := e.NewDatabase(t, e.Client(t))
		items := NewContainer(t, database, azcosmos.ContainerProperties{
			ID: "sessions",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{
				Kind: azcosmos.PartitionKeyKindMultiHash, Version: 2, Paths: []string{"/tenant", "/user", "/session"},
			},
		}, nil)
		definition := must[azcosmos.ContainerResponse](t)(items.Read(ctx, nil)).ContainerProperties.PartitionKeyDefinition
		if definition.Kind != azcosmos.PartitionKeyKindMultiHash || definition.Version != 2 || len(definition.Paths) != 3 {
			t.Fatalf("the partition key definition: %+v", definition)
		}
		key := func(tenant, user, session string) azcosmos.PartitionKey {
			return azcosmos.NewPartitionKeyString(tenant).AppendString(user).AppendString(session)
		}
		n := 0
		for _, tenant := range []string{"t1", "t2"} {
			for _, user := range []string{"u1", "u2"} {
				for _, session := range []string{"s1", "s2"} {
					n++
					must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, key(tenant, user, session), jsonBytes(t, map[string]any{
						"id": fmt.Sprint("i", n), "tenant": tenant, "user": user, "session": session, "n": n,
					}), nil))
				}
			}
		}
		read := doc(t, must[azcosmos.ItemResponse](t)(items.ReadItem(ctx, key("t2", "u1", "s2"), "i6", nil)).Value)
		if read["n"] != 6.0 {
			t.Fatalf("read with the full key: %v", read)
		}
		_, err := items.ReadItem(ctx, key("t2", "u1", "s1"), "i6", nil)
		wantStatus(t, err, http.StatusNotFound, "the id under another full key")
		// A point read needs every level.
		_, err = items.ReadItem(ctx, azcosmos.NewPartitionKeyString("t2").AppendString("u1"), "i6", nil)
		wantStatus(t, err, http.StatusBadRequest, "a point read with a two-level prefix")
		// The body's key must be the one given.
		_, err = items.CreateItem(ctx, key("t1", "u1", "s1"), jsonBytes(t, map[string]any{"id": "x", "tenant": "t1", "user": "u2", "session": "s1"}), nil)
		wantStatus(t, err, http.StatusBadRequest, "a body whose key differs from the request's")

		if got := queryAll(t, items, "SELECT VALUE c.n FROM c", key("t1", "u2", "s1"), nil); !reflect.DeepEqual(got, []any{3.0}) {
			t.Fatalf("a query with the full key: %v", got)
		}
		all := azcosmos.NewPartitionKey()
		prefix := queryAll(t, items, "SELECT VALUE c.n FROM c WHERE c.tenant = 't2'", all, nil)
		sort.Slice(prefix, func(i, j int) bool { return prefix[i].(float64) < prefix[j].(float64) })
		if !reflect.DeepEqual(prefix, []any{5.0, 6.0, 7.0, 8.0}) {
			t.Fatalf("a query on the first level: %v", prefix)
		}
		two := queryAll(t, items, "SELECT VALUE c.n FROM c WHERE c.tenant = 't1' AND c.user = 'u2'", all, nil)
		sort.Slice(two, func(i, j int) bool { return two[i].(float64) < two[j].(float64) })
		if !reflect.DeepEqual(two, []any{3.0, 4.0}) {
			t.Fatalf("a query on two levels: %v", two)
		}

		var ops azcosmos.PatchOperations
		ops.AppendIncrement("/n", 100)
		patched := must[azcosmos.ItemResponse](t)(items.PatchItem(ctx, key("t1", "u1", "s1"), "i1", ops, &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}))
		if doc(t, patched.Value)["n"] != 101.0 {
			t.Fatalf("patch with the full key: %s", patched.Value)
		}
		must[azcosmos.ItemResponse](t)(items.DeleteItem(ctx, key("t1", "u1", "s1"), "i1", nil))
		if got := queryAll(t, items, "SELECT VALUE COUNT(1) FROM c", key("t1", "u1", "s1"), nil); !reflect.DeepEqual(got, []any{0.0}) {
			t.Fatalf("after the delete: %v", got)
		}
	})
}

// Scans come in the order the items were written (their _rid), as the
// service returns them within a physical partition, not by partition key
// and id (the Go SDK's own TestCrossPartitionQuery expects two partitions
// written in turn back in turn): across partitions, in one partition and
// page by page; a replace keeps an item's place, a delete and a new create
// put it last.
func TestScansComeInWriteOrder(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		items := newItems(t, e)
		written := []string{"m", "c", "x", "a", "q", "b", "z", "k"}
		pkOf := func(i int) string { return fmt.Sprintf("p%d", i%2) }
		for i, id := range written {
			p := pkOf(i)
			must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, azcosmos.NewPartitionKeyString(p), jsonBytes(t, map[string]any{"id": id, "pk": p, "n": i}), nil))
		}
		ids := func(values []any) []string {
			out := []string{}
			for _, v := range values {
				out = append(out, v.(map[string]any)["id"].(string))
			}
			return out
		}
		all := azcosmos.NewPartitionKey()
		paged := &azcosmos.QueryOptions{PageSizeHint: 3}
		if got := ids(queryAll(t, items, "SELECT * FROM c", all, paged)); !reflect.DeepEqual(got, written) {
			t.Fatalf("across partitions in pages of 3: %v, want %v", got, written)
		}
		p1 := azcosmos.NewPartitionKeyString("p1")
		if got := ids(queryAll(t, items, "SELECT * FROM c", p1, paged)); !reflect.DeepEqual(got, []string{"c", "a", "b", "k"}) {
			t.Fatalf("in partition p1: %v", got)
		}

		// "x" (in p0) replaced keeps its place; "c" (in p1) deleted and
		// created again comes last.
		must[azcosmos.ItemResponse](t)(items.ReplaceItem(ctx, azcosmos.NewPartitionKeyString("p0"), "x", jsonBytes(t, map[string]any{"id": "x", "pk": "p0", "n": 100}), nil))
		must[azcosmos.ItemResponse](t)(items.DeleteItem(ctx, p1, "c", nil))
		must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, p1, jsonBytes(t, map[string]any{"id": "c", "pk": "p1"}), nil))
		want := []string{"m", "x", "a", "q", "b", "z", "k", "c"}
		if got := ids(queryAll(t, items, "SELECT * FROM c", all, paged)); !reflect.DeepEqual(got, want) {
			t.Fatalf("after a replace and a delete and create: %v, want %v", got, want)
		}
	})
}
