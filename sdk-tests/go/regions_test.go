package sdktests

// A multi-region account (--regions; docs/src/regions.md) through azcosmos
// with PreferredRegions, addressed at the endpoint the emulator prints,
// http://localhost:PORT/: both loopbacks answer on its port, whichever Go
// resolves localhost to first. Which region served each request is read
// from the host of every request the SDK sent.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// recording sends requests through next and notes each one's port.
type recording struct {
	next  policy.Transporter
	mu    sync.Mutex
	ports []string
}

func (r *recording) Do(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.ports = append(r.ports, req.URL.Port())
	r.mu.Unlock()
	return r.next.Do(req)
}

func (r *recording) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ports := r.ports
	r.ports = nil
	return ports
}

func TestPreferredRegionsWithThePrintedEndpoint(t *testing.T) {
	e, err := startEmulator(false, "--regions", "West US,East US")
	if err != nil {
		t.Fatal(err)
	}
	defer e.stop()
	if !strings.HasPrefix(e.Endpoint, "http://localhost:") {
		t.Fatalf("the printed endpoint %s does not name localhost", e.Endpoint)
	}
	ports := map[string]string{}
	for _, region := range e.control(t, "GET", "_emulator/regions", nil)["regions"].([]any) {
		r := region.(map[string]any)
		u, err := url.Parse(r["endpoint"].(string))
		if err != nil {
			t.Fatal(err)
		}
		ports[r["name"].(string)] = u.Port()
	}
	transport := &recording{next: e.HTTP}
	options := &azcosmos.ClientOptions{PreferredRegions: []string{"East US", "West US"}}
	options.Transport = transport
	client, err := azcosmos.NewClientWithKey(e.Endpoint, mustKey(t), options)
	if err != nil {
		t.Fatal(err)
	}
	database := e.NewDatabase(t, client)
	container := NewContainer(t, database, azcosmos.ContainerProperties{
		ID:                     unique("c"),
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
	}, nil)
	pk := azcosmos.NewPartitionKeyString("p")
	transport.take()
	_, err = container.CreateItem(context.Background(), pk, []byte(`{"id":"a","pk":"p","v":1}`), nil)
	ok(t, err)
	if got := transport.take(); len(got) == 0 || got[len(got)-1] != ports["West US"] {
		t.Fatalf("the write went to %v, not the write region's port %s", got, ports["West US"])
	}
	read, err := container.ReadItem(context.Background(), pk, "a", nil)
	ok(t, err)
	if doc(t, read.Value)["v"] != float64(1) {
		t.Fatalf("read %s", read.Value)
	}
	if got := transport.take(); len(got) != 1 || got[0] != ports["East US"] {
		t.Fatalf("the read went to %v, not the first preferred region's port %s", got, ports["East US"])
	}
}
