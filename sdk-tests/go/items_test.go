// Items through azcosmos: create, read, replace, upsert and delete with
// their documented statuses, optimistic concurrency (If-Match, 412),
// partial document update (patch), transactional batch and ReadManyItems;
// a container made without a partition key, by _partitionKey and the
// empty key (PartitionKey.NONE).
package sdktests

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sort"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

func newItems(t *testing.T, e *Emulator) *azcosmos.ContainerClient {
	t.Helper()
	database := e.NewDatabase(t, e.Client(t))
	return NewContainer(t, database, azcosmos.ContainerProperties{
		ID:                     "items",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
	}, nil)
}

func TestItemCrud(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		items := newItems(t, e)
		pk := azcosmos.NewPartitionKeyString("p")
		withBody := &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}

		created := must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, pk, jsonBytes(t, map[string]any{"id": "a", "pk": "p", "n": 1}), withBody))
		if created.RawResponse.StatusCode != http.StatusCreated {
			t.Fatalf("create: %d", created.RawResponse.StatusCode)
		}
		body := doc(t, created.Value)
		if body["n"] != 1.0 || body["_ts"] != float64(e.Now(t)) || body["_etag"] != string(created.ETag) || body["_rid"] == nil {
			t.Fatalf("created: %v (etag %s)", body, created.ETag)
		}
		// Without EnableContentResponseOnWrite the SDK asks for no body.
		quiet := must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, pk, jsonBytes(t, map[string]any{"id": "b", "pk": "p"}), nil))
		if len(quiet.Value) != 0 || quiet.ETag == "" {
			t.Fatalf("create with minimal response: %q, etag %q", quiet.Value, quiet.ETag)
		}

		_, err := items.CreateItem(ctx, pk, jsonBytes(t, map[string]any{"id": "a", "pk": "p"}), nil)
		refusal := wantStatus(t, err, http.StatusConflict, "create of an existing id")
		if code, _ := cosmosError(t, refusal); code != "Conflict" {
			t.Fatalf("409 code %q", code)
		}
		// The same id in another logical partition is another item.
		must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, azcosmos.NewPartitionKeyString("q"), jsonBytes(t, map[string]any{"id": "a", "pk": "q"}), nil))

		read := must[azcosmos.ItemResponse](t)(items.ReadItem(ctx, pk, "a", nil))
		if doc(t, read.Value)["n"] != 1.0 || read.ETag != created.ETag {
			t.Fatalf("read: %s etag %s", read.Value, read.ETag)
		}
		_, err = items.ReadItem(ctx, pk, "missing", nil)
		refusal = wantStatus(t, err, http.StatusNotFound, "read of a missing item")
		if code, _ := cosmosError(t, refusal); code != "NotFound" {
			t.Fatalf("404 code %q", code)
		}

		e.Advance(t, 5)
		replaced := must[azcosmos.ItemResponse](t)(items.ReplaceItem(ctx, pk, "a", jsonBytes(t, map[string]any{"id": "a", "pk": "p", "n": 2}), withBody))
		if replaced.RawResponse.StatusCode != http.StatusOK || replaced.ETag == created.ETag {
			t.Fatalf("replace: %d etag %s", replaced.RawResponse.StatusCode, replaced.ETag)
		}
		if body := doc(t, replaced.Value); body["n"] != 2.0 || body["_ts"] != float64(e.Now(t)) {
			t.Fatalf("replaced: %v", body)
		}
		_, err = items.ReplaceItem(ctx, pk, "missing", jsonBytes(t, map[string]any{"id": "missing", "pk": "p"}), nil)
		wantStatus(t, err, http.StatusNotFound, "replace of a missing item")

		// If-Match: the current ETag succeeds, a stale one is refused with 412.
		stale := created.ETag
		_, err = items.ReplaceItem(ctx, pk, "a", jsonBytes(t, map[string]any{"id": "a", "pk": "p", "n": 3}), &azcosmos.ItemOptions{IfMatchEtag: &stale})
		refusal = wantStatus(t, err, http.StatusPreconditionFailed, "replace with a stale ETag")
		if code, _ := cosmosError(t, refusal); code != "PreconditionFailed" {
			t.Fatalf("412 code %q", code)
		}
		_, err = items.DeleteItem(ctx, pk, "a", &azcosmos.ItemOptions{IfMatchEtag: &stale})
		wantStatus(t, err, http.StatusPreconditionFailed, "delete with a stale ETag")
		current := replaced.ETag
		third := must[azcosmos.ItemResponse](t)(items.ReplaceItem(ctx, pk, "a", jsonBytes(t, map[string]any{"id": "a", "pk": "p", "n": 3}), &azcosmos.ItemOptions{IfMatchEtag: &current}))
		if third.ETag == current {
			t.Fatal("the ETag did not change with the replace")
		}

		upserted := must[azcosmos.ItemResponse](t)(items.UpsertItem(ctx, pk, jsonBytes(t, map[string]any{"id": "c", "pk": "p", "n": 1}), nil))
		if upserted.RawResponse.StatusCode != http.StatusCreated {
			t.Fatalf("upsert of a new item: %d, want 201", upserted.RawResponse.StatusCode)
		}
		upserted = must[azcosmos.ItemResponse](t)(items.UpsertItem(ctx, pk, jsonBytes(t, map[string]any{"id": "c", "pk": "p", "n": 2}), nil))
		if upserted.RawResponse.StatusCode != http.StatusOK {
			t.Fatalf("upsert of an existing item: %d, want 200", upserted.RawResponse.StatusCode)
		}
		old := azcore.ETag(`"0000-stale"`)
		_, err = items.UpsertItem(ctx, pk, jsonBytes(t, map[string]any{"id": "c", "pk": "p", "n": 3}), &azcosmos.ItemOptions{IfMatchEtag: &old})
		wantStatus(t, err, http.StatusPreconditionFailed, "upsert with a stale ETag")
		if n := doc(t, must[azcosmos.ItemResponse](t)(items.ReadItem(ctx, pk, "c", nil)).Value)["n"]; n != 2.0 {
			t.Fatalf("after the refused upsert: n = %v, want 2", n)
		}

		deleted := must[azcosmos.ItemResponse](t)(items.DeleteItem(ctx, pk, "a", nil))
		if deleted.RawResponse.StatusCode != http.StatusNoContent {
			t.Fatalf("delete: %d", deleted.RawResponse.StatusCode)
		}
		_, err = items.ReadItem(ctx, pk, "a", nil)
		wantStatus(t, err, http.StatusNotFound, "read of a deleted item")
		_, err = items.DeleteItem(ctx, pk, "a", nil)
		wantStatus(t, err, http.StatusNotFound, "delete of a deleted item")
		// The item of the same id in partition q is untouched.
		must[azcosmos.ItemResponse](t)(items.ReadItem(ctx, azcosmos.NewPartitionKeyString("q"), "a", nil))

		// A body whose partition key differs from the request's is refused.
		_, err = items.CreateItem(ctx, pk, jsonBytes(t, map[string]any{"id": "x", "pk": "other"}), nil)
		wantStatus(t, err, http.StatusBadRequest, "a body in another partition than the header's")
	})
}

func TestPatch(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		items := newItems(t, e)
		pk := azcosmos.NewPartitionKeyString("p")
		must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, pk, jsonBytes(t, map[string]any{
			"id": "a", "pk": "p", "name": "old", "count": 1, "tags": []string{"x"}, "gone": true, "nested": map[string]any{"v": 1},
		}), nil))

		var ops azcosmos.PatchOperations
		ops.AppendSet("/name", "new")
		ops.AppendSet("/added", 7)
		ops.AppendAdd("/tags/0", "first")
		ops.AppendAdd("/tags/-", "last")
		ops.AppendRemove("/gone")
		ops.AppendReplace("/nested/v", 2)
		ops.AppendIncrement("/count", 5)
		patched := must[azcosmos.ItemResponse](t)(items.PatchItem(ctx, pk, "a", ops, &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}))
		if patched.RawResponse.StatusCode != http.StatusOK {
			t.Fatalf("patch: %d", patched.RawResponse.StatusCode)
		}
		body := doc(t, patched.Value)
		tags, _ := body["tags"].([]any)
		if body["name"] != "new" || body["added"] != 7.0 || body["count"] != 6.0 || len(tags) != 3 ||
			tags[0] != "first" || tags[1] != "x" || tags[2] != "last" || body["nested"].(map[string]any)["v"] != 2.0 {
			t.Fatalf("patched: %v", body)
		}
		if _, ok := body["gone"]; ok {
			t.Fatalf("remove left /gone: %v", body)
		}
		if read := doc(t, must[azcosmos.ItemResponse](t)(items.ReadItem(ctx, pk, "a", nil)).Value); read["count"] != 6.0 {
			t.Fatalf("read after the patch: %v", read)
		}

		// A conditional patch applies when its filter matches the item...
		var conditional azcosmos.PatchOperations
		conditional.SetCondition("FROM c WHERE c.count = 6")
		conditional.AppendIncrement("/count", 1)
		must[azcosmos.ItemResponse](t)(items.PatchItem(ctx, pk, "a", conditional, nil))
		// ...and is refused with 412 when it does not, changing nothing.
		_, err := items.PatchItem(ctx, pk, "a", conditional, nil)
		wantStatus(t, err, http.StatusPreconditionFailed, "a patch whose condition is false")
		if read := doc(t, must[azcosmos.ItemResponse](t)(items.ReadItem(ctx, pk, "a", nil)).Value); read["count"] != 7.0 {
			t.Fatalf("count after the conditional patches: %v, want 7", read["count"])
		}

		refused := []struct {
			what   string
			ops    func(*azcosmos.PatchOperations)
			status int
		}{
			{"replace of a missing path", func(o *azcosmos.PatchOperations) { o.AppendReplace("/missing", 1) }, http.StatusBadRequest},
			{"remove of a missing path", func(o *azcosmos.PatchOperations) { o.AppendRemove("/missing") }, http.StatusBadRequest},
			{"increment of a string", func(o *azcosmos.PatchOperations) { o.AppendIncrement("/name", 1) }, http.StatusBadRequest},
			{"set of the partition key", func(o *azcosmos.PatchOperations) { o.AppendSet("/pk", "q") }, http.StatusBadRequest},
			{"set of the id", func(o *azcosmos.PatchOperations) { o.AppendSet("/id", "b") }, http.StatusBadRequest},
			{"eleven operations", func(o *azcosmos.PatchOperations) {
				for range 11 {
					o.AppendIncrement("/count", 1)
				}
			}, http.StatusBadRequest},
		}
		for _, r := range refused {
			var o azcosmos.PatchOperations
			r.ops(&o)
			_, err := items.PatchItem(ctx, pk, "a", o, nil)
			refusal := wantStatus(t, err, r.status, r.what)
			if code, _ := cosmosError(t, refusal); code != "BadRequest" {
				t.Fatalf("%s: code %q", r.what, code)
			}
		}
		// A refused patch applies none of its operations.
		var half azcosmos.PatchOperations
		half.AppendSet("/name", "partial")
		half.AppendReplace("/missing", 1)
		_, err = items.PatchItem(ctx, pk, "a", half, nil)
		wantStatus(t, err, http.StatusBadRequest, "a patch whose second operation fails")
		if read := doc(t, must[azcosmos.ItemResponse](t)(items.ReadItem(ctx, pk, "a", nil)).Value); read["name"] != "new" || read["count"] != 7.0 {
			t.Fatalf("after the refused patches: %v", read)
		}

		var missing azcosmos.PatchOperations
		missing.AppendSet("/name", "x")
		_, err = items.PatchItem(ctx, pk, "missing", missing, nil)
		wantStatus(t, err, http.StatusNotFound, "a patch of a missing item")
	})
}

func TestTransactionalBatch(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		items := newItems(t, e)
		pk := azcosmos.NewPartitionKeyString("p")
		must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, pk, jsonBytes(t, map[string]any{"id": "old", "pk": "p", "n": 1}), nil))
		must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, pk, jsonBytes(t, map[string]any{"id": "doomed", "pk": "p"}), nil))

		batch := items.NewTransactionalBatch(pk)
		batch.CreateItem(jsonBytes(t, map[string]any{"id": "new", "pk": "p"}), nil)
		batch.UpsertItem(jsonBytes(t, map[string]any{"id": "up", "pk": "p"}), nil)
		batch.ReplaceItem("old", jsonBytes(t, map[string]any{"id": "old", "pk": "p", "n": 2}), nil)
		var ops azcosmos.PatchOperations
		ops.AppendIncrement("/n", 10)
		batch.PatchItem("old", ops, nil)
		batch.DeleteItem("doomed", nil)
		batch.ReadItem("old", nil)
		result := must[azcosmos.TransactionalBatchResponse](t)(items.ExecuteTransactionalBatch(ctx, batch, nil))
		if !result.Success {
			t.Fatalf("batch failed: %+v", result.OperationResults)
		}
		want := []int32{201, 201, 200, 200, 204, 200}
		if len(result.OperationResults) != len(want) {
			t.Fatalf("%d results, want %d", len(result.OperationResults), len(want))
		}
		for i, r := range result.OperationResults {
			if r.StatusCode != want[i] {
				t.Fatalf("operation %d: %d, want %d", i, r.StatusCode, want[i])
			}
		}
		if n := doc(t, result.OperationResults[5].ResourceBody)["n"]; n != 12.0 {
			t.Fatalf("the batch's read: n = %v, want 12", n)
		}
		_, err := items.ReadItem(ctx, pk, "doomed", nil)
		wantStatus(t, err, http.StatusNotFound, "an item the batch deleted")

		// A failing operation: the batch answers 207, the failing operation
		// its own status (409), every other one 424, and nothing is written.
		failing := items.NewTransactionalBatch(pk)
		failing.CreateItem(jsonBytes(t, map[string]any{"id": "fresh", "pk": "p"}), nil)
		failing.ReplaceItem("old", jsonBytes(t, map[string]any{"id": "old", "pk": "p", "n": 100}), nil)
		failing.CreateItem(jsonBytes(t, map[string]any{"id": "new", "pk": "p"}), nil)
		failing.DeleteItem("up", nil)
		failed := must[azcosmos.TransactionalBatchResponse](t)(items.ExecuteTransactionalBatch(ctx, failing, nil))
		if failed.Success || failed.RawResponse.StatusCode != http.StatusMultiStatus {
			t.Fatalf("a failing batch: success %v, status %d", failed.Success, failed.RawResponse.StatusCode)
		}
		want = []int32{424, 424, 409, 424}
		for i, r := range failed.OperationResults {
			if r.StatusCode != want[i] {
				t.Fatalf("failing batch, operation %d: %d, want %d", i, r.StatusCode, want[i])
			}
		}
		_, err = items.ReadItem(ctx, pk, "fresh", nil)
		wantStatus(t, err, http.StatusNotFound, "an item a rolled back batch created")
		if n := doc(t, must[azcosmos.ItemResponse](t)(items.ReadItem(ctx, pk, "old", nil)).Value)["n"]; n != 12.0 {
			t.Fatalf("after the rolled back batch: n = %v, want 12", n)
		}
		must[azcosmos.ItemResponse](t)(items.ReadItem(ctx, pk, "up", nil))

		// A stale ETag on one operation: 412 for it, 424 for the rest.
		stale := azcore.ETag(`"stale"`)
		conditional := items.NewTransactionalBatch(pk)
		conditional.UpsertItem(jsonBytes(t, map[string]any{"id": "other", "pk": "p"}), nil)
		conditional.ReplaceItem("old", jsonBytes(t, map[string]any{"id": "old", "pk": "p"}), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &stale})
		failed = must[azcosmos.TransactionalBatchResponse](t)(items.ExecuteTransactionalBatch(ctx, conditional, nil))
		if failed.Success || failed.OperationResults[0].StatusCode != 424 || failed.OperationResults[1].StatusCode != 412 {
			t.Fatalf("a batch with a stale ETag: %+v", failed.OperationResults)
		}
		_, err = items.ReadItem(ctx, pk, "other", nil)
		wantStatus(t, err, http.StatusNotFound, "an item a rolled back batch upserted")
	})
}

func TestReadManyItems(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		items := newItems(t, e)
		for _, p := range []string{"p", "q", "r"} {
			for _, id := range []string{"1", "2"} {
				must[azcosmos.ItemResponse](t)(items.CreateItem(ctx, azcosmos.NewPartitionKeyString(p), jsonBytes(t, map[string]any{"id": id, "pk": p}), nil))
			}
		}
		identities := []azcosmos.ItemIdentity{
			{ID: "1", PartitionKey: azcosmos.NewPartitionKeyString("p")},
			{ID: "2", PartitionKey: azcosmos.NewPartitionKeyString("q")},
			{ID: "1", PartitionKey: azcosmos.NewPartitionKeyString("r")},
			// Missing items are left out, not errors.
			{ID: "3", PartitionKey: azcosmos.NewPartitionKeyString("p")},
			{ID: "1", PartitionKey: azcosmos.NewPartitionKeyString("z")},
		}
		response := must[azcosmos.ReadManyItemsResponse](t)(items.ReadManyItems(ctx, identities, nil))
		var got []string
		for _, raw := range response.Items {
			d := doc(t, raw)
			got = append(got, d["pk"].(string)+"/"+d["id"].(string))
		}
		sort.Strings(got)
		if len(got) != 3 || got[0] != "p/1" || got[1] != "q/2" || got[2] != "r/1" {
			t.Fatalf("read many: %v", got)
		}
	})
}

// A container made without a partition key, as the v2 SDKs made them (no
// partitionKey, API version 2018-06-18): an item with "_partitionKey" is in
// that logical partition, one without it is reached with the empty key
// (NewPartitionKey(), the SDKs' PartitionKey.NONE), as Microsoft's "Migrate
// non-partitioned containers to partitioned containers" describes.
func TestNonPartitionedContainer(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		client := e.Client(t)
		database := e.NewDatabase(t, client)
		request, err := http.NewRequest(http.MethodPost, e.Endpoint+"dbs/"+database.ID()+"/colls",
			bytes.NewReader(jsonBytes(t, map[string]any{"id": "legacy"})))
		if err != nil {
			t.Fatal(err)
		}
		request.Header = signedFor(http.MethodPost, "colls", "dbs/"+database.ID())
		request.Header.Set("x-ms-version", "2018-06-18")
		request.Header.Set("content-type", "application/json")
		response, err := e.HTTP.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(response.Body)
		response.Body.Close()
		if response.StatusCode != http.StatusCreated {
			t.Fatalf("create: %d %s", response.StatusCode, answer)
		}
		container, err := database.NewContainer("legacy")
		if err != nil {
			t.Fatal(err)
		}
		properties := must[azcosmos.ContainerResponse](t)(container.Read(ctx, nil))
		if paths := properties.ContainerProperties.PartitionKeyDefinition.Paths; len(paths) != 1 || paths[0] != "/_partitionKey" {
			t.Fatalf("definition: %v", paths)
		}
		none := azcosmos.NewPartitionKey()
		doe := azcosmos.NewPartitionKeyString("Doe")
		for _, item := range []struct {
			pk   azcosmos.PartitionKey
			body map[string]any
		}{
			{none, map[string]any{"id": "old-1"}},
			{doe, map[string]any{"id": "id-1", "_partitionKey": "Doe"}},
			{doe, map[string]any{"id": "id-2", "_partitionKey": "Doe"}},
		} {
			must[azcosmos.ItemResponse](t)(container.CreateItem(ctx, item.pk, jsonBytes(t, item.body), nil))
		}
		read := must[azcosmos.ItemResponse](t)(container.ReadItem(ctx, doe, "id-1", nil))
		if doc(t, read.Value)["_partitionKey"] != "Doe" {
			t.Fatalf("read: %s", read.Value)
		}
		must[azcosmos.ItemResponse](t)(container.ReadItem(ctx, none, "old-1", nil))
		_, err = container.ReadItem(ctx, none, "id-1", nil)
		wantStatus(t, err, http.StatusNotFound, "an item of \"Doe\" read with the empty key")

		ids := func(items []any) []string {
			out := []string{}
			for _, item := range items {
				out = append(out, item.(map[string]any)["id"].(string))
			}
			sort.Strings(out)
			return out
		}
		if got := ids(queryAll(t, container, "SELECT * FROM c", doe, nil)); len(got) != 2 || got[0] != "id-1" || got[1] != "id-2" {
			t.Fatalf("query of \"Doe\": %v", got)
		}
		batch := container.NewTransactionalBatch(doe)
		batch.CreateItem(jsonBytes(t, map[string]any{"id": "id-3", "_partitionKey": "Doe"}), nil)
		batch.ReadItem("id-1", nil)
		answered := must[azcosmos.TransactionalBatchResponse](t)(container.ExecuteTransactionalBatch(ctx, batch, nil))
		if !answered.Success || answered.OperationResults[0].StatusCode != http.StatusCreated {
			t.Fatalf("batch: %+v", answered.OperationResults)
		}
		must[azcosmos.ItemResponse](t)(container.DeleteItem(ctx, none, "old-1", nil))
		must[azcosmos.ItemResponse](t)(container.DeleteItem(ctx, doe, "id-3", nil))
	})
}
