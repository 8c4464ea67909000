package router_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHealthHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for _, path := range []string{"/health", "/api/v1/health"} {
		t.Run(path, func(t *testing.T) {
			r := ts.do("GET", path, "", nil)
			mustStatus(t, r, 200)
			want := map[string]any{"status": "ok", "database": false, "version": "1.0.0"}
			if !reflect.DeepEqual(r.Body, want) {
				t.Errorf("body %s, want %v", r.Raw, want)
			}
		})
	}
	// Load balancers probe with HEAD: the same status, no body.
	for _, path := range []string{"/health", "/health/ready", "/api/v1/health/ready"} {
		if r := ts.do("HEAD", path, "", nil); r.Status != 200 || len(r.Raw) != 0 {
			t.Errorf("HEAD %s: %d %q", path, r.Status, r.Raw)
		}
	}
	for _, path := range []string{"/health/ready", "/api/v1/health/ready"} {
		t.Run(path, func(t *testing.T) {
			r := ts.do("GET", path, "", nil)
			mustStatus(t, r, 200)
			want := map[string]any{"ready": true, "version": "1.0.0",
				"checks": map[string]any{"database": true, "engine": true, "embedding": true}}
			if !reflect.DeepEqual(r.Body, want) {
				t.Errorf("body %s, want %v", r.Raw, want)
			}
		})
	}
}

func TestEnvelopeHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)

	t.Run("unknown routes", func(t *testing.T) {
		for _, p := range []string{"/nope", "/api/v1/nope", "/api/v1/memory/nope", "/api/v2/memory/write", "/api/v1/memory/write/"} {
			for _, key := range []string{"", ts.Key} {
				r := ts.do("GET", p, key, nil)
				checkEnvelope(t, r, 404, "NOT_FOUND")
			}
		}
	})

	t.Run("wrong methods", func(t *testing.T) {
		cases := []struct{ method, path string }{
			{"GET", "/api/v1/memory/write"},
			{"PUT", "/api/v1/memory/read"},
			{"POST", "/api/v1/memory/stats"},
			{"POST", "/health"},
			{"DELETE", "/health/ready"},
			{"PATCH", "/api/v1/memory/atoms/0190a000-0000-7000-8000-000000000000"},
			// The {atom_id} routes match this path: a wrong method was 404
			// "Atom not found" (and a DELETE 200 deleted 0).
			{"GET", "/api/v1/memory/atoms/by-external-ref"},
			{"DELETE", "/api/v1/memory/atoms/by-external-ref"},
		}
		for _, tc := range cases {
			r := ts.do(tc.method, tc.path, ts.Key, nil)
			checkEnvelope(t, r, 405, str(r.Body["code"]))
			if str(r.Body["code"]) == "" {
				t.Errorf("%s %s: empty code", tc.method, tc.path)
			}
			if r.Header.Get("Allow") == "" {
				t.Errorf("%s %s: no Allow header", tc.method, tc.path)
			}
		}
	})

	t.Run("request IDs are unique", func(t *testing.T) {
		seen := map[string]bool{}
		for range 5 {
			r := ts.do("GET", "/memory/stats", ts.Key, nil)
			id := r.Header.Get("X-Request-Id")
			if id == "" || seen[id] {
				t.Fatalf("X-Request-Id %q (seen %v)", id, seen)
			}
			seen[id] = true
			r = ts.do("GET", "/memory/atoms/x", ts.Key, nil)
			checkEnvelope(t, r, 404, "NOT_FOUND")
			if seen[str(r.Body["requestId"])] {
				t.Fatal("requestId reused")
			}
			seen[str(r.Body["requestId"])] = true
		}
	})

	t.Run("body over 16 MiB is 413", func(t *testing.T) {
		// Answered from the announced length, before any of the body (a
		// client sending the whole body: TestBodyOverCapHTTP).
		r := rawRequest(t, ts, "POST /api/v1/memory/write HTTP/1.1\r\nHost: hebb\r\nX-Api-Key: "+ts.Key+
			"\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(16<<20+1)+"\r\n\r\n{\"content\":\"")
		checkEnvelope(t, r, 413, "VALIDATION_ERROR")
	})

	t.Run("body under 16 MiB over the limits is 400", func(t *testing.T) {
		big := `{"content":"` + strings.Repeat("a", 16<<20-100) + `"}`
		r := ts.do("POST", "/memory/write", ts.Key, big)
		checkValidation(t, r, "body.content")
	})

	t.Run("headers", func(t *testing.T) {
		// A browser sends every cookie of the host: 12 KiB of them pass.
		h := http.Header{"X-Api-Key": {ts.Key}, "Cookie": {"a=" + strings.Repeat("c", 12<<10)}}
		mustStatus(t, ts.doH("GET", "/memory/stats", h, nil), 200)
		h.Set("Cookie", "a="+strings.Repeat("c", 20<<10))
		checkValidation(t, ts.doH("GET", "/memory/stats", h, nil), "header")
		r := rawRequest(t, ts, "GARBAGE\r\n\r\n")
		checkValidation(t, r, "request")
	})

	t.Run("server keeps serving", func(t *testing.T) {
		mustStatus(t, ts.do("GET", "/memory/stats", ts.Key, nil), 200)
	})
}

// rawRequest writes head (a request line, headers and maybe a partial body)
// on a fresh connection and reads one response.
func rawRequest(t *testing.T, ts *testServer, head string) resp {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatalf("write: %v", err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := resp{Status: res.StatusCode, Raw: raw, Header: res.Header}
	_ = json.Unmarshal(raw, &out.Body)
	return out
}

// The console answers at /console/ as at /console (the REST router's JSON
// 404 answered the trailing slash).
func TestConsoleTrailingSlash(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/console", "/console/"} {
		res, err := noRedirect.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if ct := res.Header.Get("Content-Type"); res.StatusCode == 404 || strings.HasPrefix(ct, "application/json") {
			t.Errorf("GET %s: %d %s, want the console", p, res.StatusCode, ct)
		}
	}
}
