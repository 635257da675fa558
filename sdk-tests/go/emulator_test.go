// One cosmos-emulator process per scheme, started by the tests as the
// Python, JavaScript and Java suites do (sdk-tests/python/emulator.py,
// sdk-tests/js/emulator.mjs): `--port 0 --clock manual --clock-start
// 1700000000 --parent-pid <this process>`, plus `--tls --cert-out
// <tmp>/cert.pem` for HTTPS, the endpoint read from the first stdout line
// (`listening on ...`), stopped with SIGTERM once every test has run.
// HTTPS clients trust exactly the emulator's certificate (a RootCAs pool
// holding it; verification stays on). The control routes (the test clock,
// the purge) are signed with the account key like an account read
// (docs/src/clock.md).
package sdktests

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Key is the emulator's well-known account key.
const Key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// ClockStart is a fixed start, so that runs are identical; far from the
// wall clock on purpose.
const ClockStart = 1_700_000_000

const startupTimeout = 30 * time.Second

// Emulator is one emulator process on the manual clock.
type Emulator struct {
	Scheme   string
	Endpoint string
	CertPath string
	// HTTP trusts exactly this emulator's certificate over HTTPS.
	HTTP    *http.Client
	process *exec.Cmd
	stderr  *os.File
	dir     string
}

// emulators are started by TestMain, HTTP first.
var emulators []*Emulator

func TestMain(m *testing.M) {
	code := func() int {
		for _, tls := range []bool{false, true} {
			emulator, err := startEmulator(tls)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			emulators = append(emulators, emulator)
		}
		return m.Run()
	}()
	for _, emulator := range emulators {
		emulator.stop()
	}
	os.Exit(code)
}

func binary() string {
	if bin := os.Getenv("COSMOS_EMULATOR_BIN"); bin != "" {
		return bin
	}
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", "target", "debug", "cosmos-emulator")
}

func startEmulator(secure bool, extra ...string) (*Emulator, error) {
	dir, err := os.MkdirTemp("", "cosmos-sdk-tests-go-")
	if err != nil {
		return nil, err
	}
	e := &Emulator{Scheme: "http", dir: dir, HTTP: &http.Client{Timeout: 30 * time.Second}}
	args := []string{"--port", "0", "--clock", "manual", "--clock-start", strconv.Itoa(ClockStart),
		"--parent-pid", strconv.Itoa(os.Getpid())}
	if secure {
		e.Scheme = "https"
		e.CertPath = filepath.Join(dir, "cert.pem")
		args = append(args, "--tls", "--cert-out", e.CertPath)
	}
	args = append(args, extra...)
	e.stderr, err = os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, err
	}
	e.process = exec.Command(binary(), args...)
	e.process.Stderr = e.stderr
	stdout, err := e.process.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := e.process.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s (build it: cargo build -p cosmos-emulator): %w", binary(), err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		// Keep reading so that the emulator never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(startupTimeout):
		e.stop()
		return nil, fmt.Errorf("no 'listening on' line within %s%s", startupTimeout, e.stderrTail())
	}
	endpoint, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		e.stop()
		return nil, fmt.Errorf("unexpected first stdout line %q%s", line, e.stderrTail())
	}
	e.Endpoint = strings.TrimSuffix(endpoint, "/") + "/"
	if !strings.HasPrefix(e.Endpoint, e.Scheme+"://") {
		e.stop()
		return nil, fmt.Errorf("expected an %s:// endpoint, the emulator printed %s", e.Scheme, e.Endpoint)
	}
	if secure {
		pem, err := os.ReadFile(e.CertPath)
		if err != nil {
			e.stop()
			return nil, fmt.Errorf("--cert-out %s: %w", e.CertPath, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			e.stop()
			return nil, fmt.Errorf("--cert-out %s holds no certificate", e.CertPath)
		}
		e.HTTP.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	return e, nil
}

func (e *Emulator) stderrTail() string {
	text, _ := os.ReadFile(e.stderr.Name())
	if len(text) > 2000 {
		text = text[len(text)-2000:]
	}
	return "\n--- emulator stderr ---\n" + string(text)
}

func (e *Emulator) stop() {
	if e.process.Process != nil && e.process.ProcessState == nil {
		_ = e.process.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = e.process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = e.process.Process.Kill()
			<-done
		}
	}
	e.stderr.Close()
	_ = os.RemoveAll(e.dir)
}

// Client is an SDK client for this emulator, as applications build one:
// the endpoint and the account key; over HTTPS its transport trusts the
// emulator's certificate.
func (e *Emulator) Client(t *testing.T) *azcosmos.Client {
	t.Helper()
	options := &azcosmos.ClientOptions{}
	options.Transport = e.HTTP
	client, err := azcosmos.NewClientWithKey(e.Endpoint, mustKey(t), options)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func mustKey(t *testing.T) azcosmos.KeyCredential {
	t.Helper()
	key, err := azcosmos.NewKeyCredential(Key)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// forEachScheme runs body as a subtest against each emulator, [http] then [https].
func forEachScheme(t *testing.T, body func(t *testing.T, e *Emulator)) {
	for _, e := range emulators {
		t.Run(e.Scheme, func(t *testing.T) { body(t, e) })
	}
}

// NewDatabase makes a database with a random name, deleted when the test ends.
func (e *Emulator) NewDatabase(t *testing.T, client *azcosmos.Client) *azcosmos.DatabaseClient {
	t.Helper()
	id := unique("db")
	if _, err := client.CreateDatabase(context.Background(), azcosmos.DatabaseProperties{ID: id}, nil); err != nil {
		t.Fatal(err)
	}
	database, err := client.NewDatabase(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = database.Delete(context.Background(), nil) })
	return database
}

// NewContainer creates a container with these properties in database.
func NewContainer(t *testing.T, database *azcosmos.DatabaseClient, properties azcosmos.ContainerProperties, options *azcosmos.CreateContainerOptions) *azcosmos.ContainerClient {
	t.Helper()
	if _, err := database.CreateContainer(context.Background(), properties, options); err != nil {
		t.Fatal(err)
	}
	container, err := database.NewContainer(properties.ID)
	if err != nil {
		t.Fatal(err)
	}
	return container
}

func unique(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// --- the control API ---------------------------------------------------------

// signed returns the master-key headers of docs/src/reference/protocol.md
// for a control route: resource type and link empty.
func signed(verb string) http.Header {
	return signedFor(verb, "", "")
}

// signedFor returns the master-key headers for a resource type and link.
func signedFor(verb, resourceType, link string) http.Header {
	secret, _ := base64.StdEncoding.DecodeString(Key)
	date := time.Now().UTC().Format(http.TimeFormat)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(strings.ToLower(verb) + "\n" + strings.ToLower(resourceType) + "\n" + link + "\n" + strings.ToLower(date) + "\n\n"))
	token := "type=master&ver=1.0&sig=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	h := http.Header{}
	h.Set("x-ms-date", date)
	h.Set("x-ms-version", "2020-07-15")
	h.Set("authorization", url.QueryEscape(token))
	return h
}

func (e *Emulator) control(t *testing.T, method, route string, body any) map[string]any {
	t.Helper()
	var reader io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		reader = bytes.NewReader(data)
	}
	request, err := http.NewRequest(method, e.Endpoint+route, reader)
	if err != nil {
		t.Fatal(err)
	}
	request.Header = signed(method)
	if body != nil {
		request.Header.Set("content-type", "application/json")
	}
	response, err := e.HTTP.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	data, _ := io.ReadAll(response.Body)
	if response.StatusCode != http.StatusOK {
		t.Fatalf("%s /%s: %d %s", method, route, response.StatusCode, data)
	}
	var answer map[string]any
	if err := json.Unmarshal(data, &answer); err != nil {
		t.Fatalf("%s /%s: %s", method, route, data)
	}
	return answer
}

// Now is the emulator's clock, in epoch seconds.
func (e *Emulator) Now(t *testing.T) int64 {
	t.Helper()
	return int64(e.control(t, http.MethodGet, "_emulator/clock", nil)["now"].(float64))
}

// Advance moves the emulator's test clock by seconds; the new now.
func (e *Emulator) Advance(t *testing.T, seconds int64) int64 {
	t.Helper()
	return int64(e.control(t, http.MethodPost, "_emulator/clock", map[string]int64{"advance": seconds})["now"].(float64))
}

// Purge returns once every item due now is purged; the number purged.
func (e *Emulator) Purge(t *testing.T) int {
	t.Helper()
	return int(e.control(t, http.MethodPost, "_emulator/purge", map[string]any{})["purged"].(float64))
}

// --- assertions --------------------------------------------------------------

// statusOf is the HTTP status of an SDK error (*azcore.ResponseError), 0 if none.
func statusOf(err error) int {
	var responseErr *azcore.ResponseError
	if errors.As(err, &responseErr) {
		return responseErr.StatusCode
	}
	return 0
}

// wantStatus fails unless err is an SDK response error with this status;
// returns it for further checks.
func wantStatus(t *testing.T, err error, status int, what string) *azcore.ResponseError {
	t.Helper()
	var responseErr *azcore.ResponseError
	if !errors.As(err, &responseErr) {
		t.Fatalf("%s: %v, want a %d response error", what, err, status)
	}
	if responseErr.StatusCode != status {
		t.Fatalf("%s: status %d, want %d (%v)", what, responseErr.StatusCode, status, err)
	}
	return responseErr
}

// cosmosError reads the refusal's body, {"code", "message"}.
func cosmosError(t *testing.T, err *azcore.ResponseError) (code, message string) {
	t.Helper()
	if err.RawResponse == nil {
		t.Fatal("no raw response")
	}
	var body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	data, _ := io.ReadAll(err.RawResponse.Body)
	if e := json.Unmarshal(data, &body); e != nil || body.Code == "" || body.Message == "" {
		// azcore reads the body into the error text already; look there.
		t.Fatalf("a refusal without a {code, message} body: %q (%v)", data, err)
	}
	return body.Code, body.Message
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func doc(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return m
}

func jsonBytes(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// queryAll drains a query pager; every page's items, decoded.
func queryAll(t *testing.T, container *azcosmos.ContainerClient, query string, pk azcosmos.PartitionKey, options *azcosmos.QueryOptions) []any {
	t.Helper()
	pager := container.NewQueryItemsPager(query, pk, options)
	out := []any{}
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		for _, raw := range page.Items {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
