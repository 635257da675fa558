// Starting cosmos-emulator from Go tests, and its test clock: the helpers
// the guide's Go quick start shows (docs/src/quick-start/go.md).
package quickstart

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ANCHOR: key
// The emulator's well-known account key.
const key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// ANCHOR_END: key

// ANCHOR: start
// startEmulator starts cosmos-emulator (from PATH) on a free port with the
// manual test clock and returns its endpoint, such as
// "http://localhost:40123/"; the emulator stops when the test ends, or with
// this process (--parent-pid) if it is killed.
func startEmulator(t *testing.T, args ...string) string {
	t.Helper()
	args = append([]string{"--port", "0", "--clock", "manual",
		"--parent-pid", strconv.Itoa(os.Getpid())}, args...)
	emulator := exec.Command("cosmos-emulator", args...)
	emulator.Stderr = os.Stderr
	stdout, err := emulator.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := emulator.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = emulator.Process.Signal(syscall.SIGTERM)
		_ = emulator.Wait()
	})
	// Its first line: "listening on http://localhost:<port>".
	line, err := bufio.NewReader(stdout).ReadString('\n')
	endpoint, found := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !found {
		t.Fatalf("cosmos-emulator printed %q (%v)", line, err)
	}
	return strings.TrimSuffix(endpoint, "/") + "/"
}

// ANCHOR_END: start

// ANCHOR: advance
// advance moves the emulator's test clock: POST /_emulator/clock
// {"advance": seconds}, signed with the account key as an account read is
// (the resource type and link empty).
func advance(t *testing.T, client *http.Client, endpoint string, seconds int) {
	t.Helper()
	secret, _ := base64.StdEncoding.DecodeString(key)
	date := time.Now().UTC().Format(http.TimeFormat)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("post\n\n\n" + strings.ToLower(date) + "\n\n"))
	signature := "type=master&ver=1.0&sig=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))

	body, _ := json.Marshal(map[string]int{"advance": seconds})
	request, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(endpoint, "/")+"/_emulator/clock", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("x-ms-date", date)
	request.Header.Set("authorization", url.QueryEscape(signature))
	request.Header.Set("content-type", "application/json")
	response, err := client.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		t.Fatalf("POST /_emulator/clock: %d", response.StatusCode)
	}
}

// ANCHOR_END: advance
