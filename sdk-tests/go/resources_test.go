// Databases, containers and their defaultTtl, and throughput, through
// azcosmos: what the service documents for each (status codes of the REST
// API reference, the TTL rules of docs/src/reference/ttl-rules.md).
package sdktests

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

func TestDatabasesAndContainers(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		client := e.Client(t)
		id := unique("db")
		created := must[azcosmos.DatabaseResponse](t)(client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: id}, nil))
		if created.RawResponse.StatusCode != http.StatusCreated || created.DatabaseProperties.ID != id {
			t.Fatalf("create database: %d %+v", created.RawResponse.StatusCode, created.DatabaseProperties)
		}
		_, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: id}, nil)
		wantStatus(t, err, http.StatusConflict, "the same database again")

		database := must[*azcosmos.DatabaseClient](t)(client.NewDatabase(id))
		read := must[azcosmos.DatabaseResponse](t)(database.Read(ctx, nil))
		if read.DatabaseProperties.ID != id || read.DatabaseProperties.ResourceID == "" {
			t.Fatalf("read database: %+v", read.DatabaseProperties)
		}

		pager := client.NewQueryDatabasesPager("SELECT * FROM d WHERE d.id = @id",
			&azcosmos.QueryDatabasesOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@id", Value: id}}})
		var found []string
		for pager.More() {
			page := must[azcosmos.QueryDatabasesResponse](t)(pager.NextPage(ctx))
			for _, d := range page.Databases {
				found = append(found, d.ID)
			}
		}
		if len(found) != 1 || found[0] != id {
			t.Fatalf("query databases: %v", found)
		}

		items := NewContainer(t, database, azcosmos.ContainerProperties{
			ID:                     "items",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		}, nil)
		_, err = database.CreateContainer(ctx, azcosmos.ContainerProperties{
			ID:                     "items",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		}, nil)
		wantStatus(t, err, http.StatusConflict, "the same container again")
		NewContainer(t, database, azcosmos.ContainerProperties{
			ID:                     "other",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		}, nil)

		properties := must[azcosmos.ContainerResponse](t)(items.Read(ctx, nil)).ContainerProperties
		if properties.ID != "items" || len(properties.PartitionKeyDefinition.Paths) != 1 ||
			properties.PartitionKeyDefinition.Paths[0] != "/pk" || properties.PartitionKeyDefinition.Kind != azcosmos.PartitionKeyKindHash {
			t.Fatalf("read container: %+v", properties)
		}
		if properties.IndexingPolicy == nil || !properties.IndexingPolicy.Automatic ||
			// The service writes "consistent"; the SDK's constant is "Consistent".
			!strings.EqualFold(string(properties.IndexingPolicy.IndexingMode), string(azcosmos.IndexingModeConsistent)) {
			t.Fatalf("the default indexing policy: %+v", properties.IndexingPolicy)
		}

		containers := database.NewQueryContainersPager("SELECT * FROM c", nil)
		var ids []string
		for containers.More() {
			page := must[azcosmos.QueryContainersResponse](t)(containers.NextPage(ctx))
			for _, c := range page.Containers {
				ids = append(ids, c.ID)
			}
		}
		if len(ids) != 2 {
			t.Fatalf("query containers: %v", ids)
		}

		deleted := must[azcosmos.ContainerResponse](t)(items.Delete(ctx, nil))
		if deleted.RawResponse.StatusCode != http.StatusNoContent {
			t.Fatalf("delete container: %d", deleted.RawResponse.StatusCode)
		}
		_, err = items.Read(ctx, nil)
		wantStatus(t, err, http.StatusNotFound, "a deleted container")
		_, err = items.Delete(ctx, nil)
		wantStatus(t, err, http.StatusNotFound, "a deleted container, deleted again")

		gone := must[azcosmos.DatabaseResponse](t)(database.Delete(ctx, nil))
		if gone.RawResponse.StatusCode != http.StatusNoContent {
			t.Fatalf("delete database: %d", gone.RawResponse.StatusCode)
		}
		_, err = database.Read(ctx, nil)
		wantStatus(t, err, http.StatusNotFound, "a deleted database")
	})
}

// defaultTtl: absent (off), -1 (on, nothing expires by default), n; changed
// and removed by a replace; 0 and values below -1 are refused (R1).
func TestContainerDefaultTimeToLive(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		database := e.NewDatabase(t, e.Client(t))
		pk := azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}
		ttl := func(n int32) *int32 { return &n }
		for _, row := range []struct {
			name string
			ttl  *int32
		}{{"off", nil}, {"on", ttl(-1)}, {"n", ttl(90)}} {
			c := NewContainer(t, database, azcosmos.ContainerProperties{ID: row.name, PartitionKeyDefinition: pk, DefaultTimeToLive: row.ttl}, nil)
			got := must[azcosmos.ContainerResponse](t)(c.Read(ctx, nil)).ContainerProperties.DefaultTimeToLive
			if (got == nil) != (row.ttl == nil) || (got != nil && *got != *row.ttl) {
				t.Fatalf("%s: defaultTtl %v, want %v", row.name, got, row.ttl)
			}
		}

		c := must[*azcosmos.ContainerClient](t)(database.NewContainer("n"))
		properties := *must[azcosmos.ContainerResponse](t)(c.Read(ctx, nil)).ContainerProperties
		properties.DefaultTimeToLive = ttl(30)
		replaced := must[azcosmos.ContainerResponse](t)(c.Replace(ctx, properties, nil))
		if d := replaced.ContainerProperties.DefaultTimeToLive; d == nil || *d != 30 {
			t.Fatalf("replaced defaultTtl: %v, want 30", d)
		}
		properties.DefaultTimeToLive = nil
		must[azcosmos.ContainerResponse](t)(c.Replace(ctx, properties, nil))
		if d := must[azcosmos.ContainerResponse](t)(c.Read(ctx, nil)).ContainerProperties.DefaultTimeToLive; d != nil {
			t.Fatalf("defaultTtl removed by a replace: %v, want none", *d)
		}

		for _, bad := range []int32{0, -2} {
			_, err := database.CreateContainer(ctx, azcosmos.ContainerProperties{ID: unique("bad"), PartitionKeyDefinition: pk, DefaultTimeToLive: ttl(bad)}, nil)
			refusal := wantStatus(t, err, http.StatusBadRequest, "defaultTtl "+itoa(int64(bad)))
			if code, _ := cosmosError(t, refusal); code != "BadRequest" {
				t.Fatalf("defaultTtl %d: code %q", bad, code)
			}
			properties.DefaultTimeToLive = ttl(bad)
			_, err = c.Replace(ctx, properties, nil)
			wantStatus(t, err, http.StatusBadRequest, "a replace with defaultTtl "+itoa(int64(bad)))
		}
	})
}

func TestThroughput(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		client := e.Client(t)
		database := e.NewDatabase(t, client)
		pk := azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}

		manual := azcosmos.NewManualThroughputProperties(400)
		c := NewContainer(t, database, azcosmos.ContainerProperties{ID: "manual", PartitionKeyDefinition: pk},
			&azcosmos.CreateContainerOptions{ThroughputProperties: &manual})
		read := must[azcosmos.ThroughputResponse](t)(c.ReadThroughput(ctx, nil))
		if rus, ok := read.ThroughputProperties.ManualThroughput(); !ok || rus != 400 {
			t.Fatalf("manual throughput: %d %v", rus, ok)
		}
		if _, ok := read.ThroughputProperties.AutoscaleMaxThroughput(); ok {
			t.Fatal("a manual offer read as autoscale")
		}
		more := azcosmos.NewManualThroughputProperties(1000)
		replaced := must[azcosmos.ThroughputResponse](t)(c.ReplaceThroughput(ctx, more, nil))
		if rus, _ := replaced.ThroughputProperties.ManualThroughput(); rus != 1000 {
			t.Fatalf("replaced throughput: %d, want 1000", rus)
		}
		if rus, _ := must[azcosmos.ThroughputResponse](t)(c.ReadThroughput(ctx, nil)).ThroughputProperties.ManualThroughput(); rus != 1000 {
			t.Fatalf("throughput read after the replace: %d, want 1000", rus)
		}
		// The documented minimum of manual throughput is 400 RU/s.
		_, err := c.ReplaceThroughput(ctx, azcosmos.NewManualThroughputProperties(100), nil)
		wantStatus(t, err, http.StatusBadRequest, "100 RU/s")

		autoscale := azcosmos.NewAutoscaleThroughputProperties(4000)
		a := NewContainer(t, database, azcosmos.ContainerProperties{ID: "autoscale", PartitionKeyDefinition: pk},
			&azcosmos.CreateContainerOptions{ThroughputProperties: &autoscale})
		offer := must[azcosmos.ThroughputResponse](t)(a.ReadThroughput(ctx, nil)).ThroughputProperties
		if max, ok := offer.AutoscaleMaxThroughput(); !ok || max != 4000 {
			t.Fatalf("autoscale max: %d %v", max, ok)
		}
		higher := azcosmos.NewAutoscaleThroughputProperties(10000)
		must[azcosmos.ThroughputResponse](t)(a.ReplaceThroughput(ctx, higher, nil))
		offer = must[azcosmos.ThroughputResponse](t)(a.ReadThroughput(ctx, nil)).ThroughputProperties
		if max, _ := offer.AutoscaleMaxThroughput(); max != 10000 {
			t.Fatalf("autoscale max after the replace: %d, want 10000", max)
		}

		// A container created without throughput, in a database without
		// shared throughput, gets 400 RU/s of its own.
		plain := NewContainer(t, database, azcosmos.ContainerProperties{ID: "plain", PartitionKeyDefinition: pk}, nil)
		if rus, ok := must[azcosmos.ThroughputResponse](t)(plain.ReadThroughput(ctx, nil)).ThroughputProperties.ManualThroughput(); !ok || rus != 400 {
			t.Fatalf("the throughput of a container created without one: %d %v, want 400", rus, ok)
		}

		// Shared database throughput.
		shared := azcosmos.NewManualThroughputProperties(800)
		id := unique("shared")
		must[azcosmos.DatabaseResponse](t)(client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: id},
			&azcosmos.CreateDatabaseOptions{ThroughputProperties: &shared}))
		sharedDb := must[*azcosmos.DatabaseClient](t)(client.NewDatabase(id))
		t.Cleanup(func() { _, _ = sharedDb.Delete(context.Background(), nil) })
		if rus, _ := must[azcosmos.ThroughputResponse](t)(sharedDb.ReadThroughput(ctx, nil)).ThroughputProperties.ManualThroughput(); rus != 800 {
			t.Fatalf("database throughput: %d, want 800", rus)
		}
		must[azcosmos.ThroughputResponse](t)(sharedDb.ReplaceThroughput(ctx, azcosmos.NewManualThroughputProperties(1200), nil))
		if rus, _ := must[azcosmos.ThroughputResponse](t)(sharedDb.ReadThroughput(ctx, nil)).ThroughputProperties.ManualThroughput(); rus != 1200 {
			t.Fatalf("database throughput after the replace: %d, want 1200", rus)
		}
		// Its containers share it: none has an offer of its own, and the SDK
		// answers 404 when the offers query finds none.
		inShared := NewContainer(t, sharedDb, azcosmos.ContainerProperties{ID: "in-shared", PartitionKeyDefinition: pk}, nil)
		_, err = inShared.ReadThroughput(ctx, nil)
		wantStatus(t, err, http.StatusNotFound, "the throughput of a container in a shared database")
	})
}
