// The transports: azcosmos over http:// as over https://, and over HTTPS
// the certificate the client trusts is the emulator's own (the one
// `--cert-out` wrote and `/_explorer/emulator.pem` serves); a client that
// trusts only the system's authorities is refused, verification on.
package sdktests

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

func TestTransport(t *testing.T) {
	forEachScheme(t, func(t *testing.T, e *Emulator) {
		ctx := context.Background()
		client := e.Client(t)
		if client.Endpoint() != e.Endpoint {
			t.Fatalf("the client's endpoint %s, want %s", client.Endpoint(), e.Endpoint)
		}
		database := e.NewDatabase(t, client)
		if _, err := database.Read(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if e.Scheme == "http" {
			return
		}

		response, err := e.HTTP.Get(e.Endpoint + "_explorer/emulator.pem")
		ok(t, err)
		served, _ := io.ReadAll(response.Body)
		response.Body.Close()
		written := must[[]byte](t)(os.ReadFile(e.CertPath))
		if response.StatusCode != http.StatusOK || !bytes.Equal(bytes.TrimSpace(served), bytes.TrimSpace(written)) {
			t.Fatalf("/_explorer/emulator.pem: %d, %d bytes, not the --cert-out certificate", response.StatusCode, len(served))
		}

		// The SDK's default transport (the system's authorities): the
		// handshake fails with a certificate error.
		options := &azcosmos.ClientOptions{}
		options.Retry.MaxRetries = -1 // no retries: the first refusal is the answer
		untrusting, err := azcosmos.NewClientWithKey(e.Endpoint, mustKey(t), options)
		ok(t, err)
		_, err = untrusting.NewQueryDatabasesPager("SELECT * FROM d", nil).NextPage(ctx)
		var unknown x509.UnknownAuthorityError
		var verification *tls.CertificateVerificationError
		if !errors.As(err, &unknown) && !errors.As(err, &verification) {
			t.Fatalf("a client without the emulator's certificate: %v, want a certificate error", err)
		}
	})
}
