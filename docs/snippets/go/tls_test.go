// The Go quick start over HTTPS: the client trusts the emulator's own
// certificate, fetched from /_explorer/emulator.pem.
package quickstart

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

func TestOverHttps(t *testing.T) {
	ctx := context.Background()
	// ANCHOR: https
	// HTTP and HTTPS on one port: the certificate is fetched over HTTP,
	// then every SDK request goes over HTTPS, verified against it.
	endpoint := startEmulator(t, "--protocol", "auto")
	response, err := http.Get(endpoint + "_explorer/emulator.pem")
	if err != nil {
		t.Fatal(err)
	}
	pem, _ := io.ReadAll(response.Body)
	response.Body.Close()
	trusted := x509.NewCertPool()
	if !trusted.AppendCertsFromPEM(pem) {
		t.Fatalf("/_explorer/emulator.pem: %q", pem)
	}
	httpsClient := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: trusted},
	}}

	credential, _ := azcosmos.NewKeyCredential(key)
	options := &azcosmos.ClientOptions{}
	options.Transport = httpsClient
	client, err := azcosmos.NewClientWithKey(strings.Replace(endpoint, "http://", "https://", 1), credential, options)
	// ANCHOR_END: https
	if err != nil {
		t.Fatal(err)
	}
	created, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "app"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if created.RawResponse.StatusCode != http.StatusCreated || created.RawResponse.TLS == nil {
		t.Fatalf("create database: %d, over TLS: %v", created.RawResponse.StatusCode, created.RawResponse.TLS != nil)
	}
}
