package router_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hebbdb/hebb/router/internal/leakcheck"
)

// A body over the 16 MiB transport cap gets its 413 VALIDATION_ERROR
// (operator.md §6) even from a client that sends the whole body before it
// reads the answer, without Expect: 100-continue. The server answered from
// the headers and closed the socket with the body unread, and the client's
// kernel took the reset for the answer: "connection reset" or "broken pipe"
// most of the time.
func TestBodyOverCapHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	body := bytes.Repeat([]byte("a"), 17<<20)
	for _, tc := range []struct {
		name    string
		chunked bool
	}{{"content-length", false}, {"chunked", true}} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 5 {
				var rd io.Reader = bytes.NewReader(body)
				if tc.chunked {
					rd = io.MultiReader(rd) // no length known: sent chunked
				}
				req, err := http.NewRequest("POST", ts.Base+"/memory/write", rd)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("X-Api-Key", ts.Key)
				req.Header.Set("Content-Type", "application/json")
				checkEnvelope(t, sendWhole(t, req, i), 413, "VALIDATION_ERROR")
			}
		})
	}
	mustStatus(t, ts.do("GET", "/memory/stats", ts.Key, nil), 200)
}

// Headers over the buffer the server reads a request's head into get
// their 400 VALIDATION_ERROR in the same way: the connection drains what
// the client still sends before it closes (net/http's client, still
// writing the headers, was reset; a CI run of TestEnvelopeHTTP caught it
// with 20 KiB of cookies).
func TestHeadersOverBufferHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for i := range 5 {
		req, err := http.NewRequest("GET", ts.Base+"/memory/stats", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", ts.Key)
		req.Header.Set("Cookie", "a="+strings.Repeat("c", 4<<20)) // more than the sockets' buffers hold
		r := sendWhole(t, req, i)
		checkValidation(t, r, "header")
	}
	mustStatus(t, ts.do("GET", "/memory/stats", ts.Key, nil), 200)
}

// sendWhole sends req (net/http writes it whole before it reads) and
// returns the answer; attempt numbers the failure.
func sendWhole(t *testing.T, req *http.Request, attempt int) resp {
	t.Helper()
	res, err := testHTTP.Do(req)
	if err != nil {
		t.Fatalf("attempt %d: %v", attempt, err)
	}
	raw, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		t.Fatalf("attempt %d: read body: %v", attempt, err)
	}
	r := resp{Status: res.StatusCode, Raw: raw, Header: res.Header}
	_ = json.Unmarshal(raw, &r.Body)
	return r
}

// TestMalformedRequestsLogNoSecrets: a request the HTTP layer refuses
// (bad framing, a bad header, chunks with a Content-Length) is answered 400
// and its connection closed, and the log quotes none of its bytes: they
// hold API keys, session cookies and vault values.
func TestMalformedRequestsLogNoSecrets(t *testing.T) {
	t.Parallel()
	var log leakcheck.Buffer
	ts := newTestServer(t, withLog(&log))
	const secret = "mk_live_LeakCanaryLeakCanaryLeakCanary01"
	for name, raw := range leakcheck.Malformed("/api/v1/vault/secrets", secret) {
		out, err := leakcheck.Send(strings.TrimPrefix(ts.URL, "http://"), raw)
		if err != nil || !strings.HasPrefix(out, "HTTP/1.1 400") {
			t.Errorf("%s: answered %.60q, %v; want 400", name, out, err)
		}
	}
	if got := log.String(); strings.Contains(got, "LeakCanary") {
		t.Fatalf("the log quotes a refused request:\n%s", got)
	}
}

// A chunked body without a Content-Length is a well-framed request.
func TestChunkedBodyHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	body := io.MultiReader(strings.NewReader(`{"content":"sent in chunks `), strings.NewReader(`of unknown length"}`))
	req, err := http.NewRequest("POST", ts.Base+"/memory/write", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", ts.Key)
	res, err := testHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(out), `"stored":true`) {
		t.Fatalf("a chunked write: %d %s", res.StatusCode, out)
	}
}
