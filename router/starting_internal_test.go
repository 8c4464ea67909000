package router

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// While the node starts, the HTTP port answers: live, not ready, and 503
// (retryable, reason "starting") for the API; after the handoff the same
// listener serves the real handler.
func TestServeStarting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	handoff := ServeStarting(ln, Starting{Version: Version, Ready: true, Embedding: true})

	get := func(method, path string) (int, http.Header, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		return doJSON(t, req)
	}
	for _, p := range []string{"/health", "/api/v1/health"} {
		if st, _, m := get("GET", p); st != 200 || m["status"] != "ok" || m["version"] != Version {
			t.Fatalf("GET %s while starting: %d %v", p, st, m)
		}
	}
	st, _, m := get("GET", "/health/ready")
	checks, _ := m["checks"].(map[string]any)
	if st != 200 || m["ready"] != false || checks["engine"] != false || checks["embedding"] != true {
		t.Fatalf("GET /health/ready while starting: %d %v", st, m)
	}
	st, h, m := get("POST", "/api/v1/memory/read")
	details, _ := m["details"].(map[string]any)
	if st != 503 || m["code"] != codeInternal || m["retryable"] != true || details["reason"] != "starting" ||
		h.Get("Retry-After") == "" || h.Get("X-Request-Id") == "" {
		t.Fatalf("POST /api/v1/memory/read while starting: %d %v %v", st, h, m)
	}

	handoff()
	handoff() // a second call does nothing (it would stall the next server's accept)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"status":"served"}`)
	}}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Shutdown() }()
	if st, _, m := get("GET", "/health"); st != 200 || m["status"] != "served" {
		t.Fatalf("after the handoff: %d %v, want the new handler's answer", st, m)
	}
}

// A handoff with nothing served, or after the listener closed (a failed
// start), returns.
func TestServeStartingHandoffClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	handoff := ServeStarting(ln, Starting{Version: Version})
	_ = ln.Close()
	handoff()
}

// Without Ready (the persistence API's listener) /health/ready is one of
// the requests that wait for the start, and /health carries the version.
func TestServeStartingNoReady(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	handoff := ServeStarting(ln, Starting{Version: "2.0.0"})
	defer handoff()
	for path, want := range map[string]int{"/health": 200, "/health/ready": 503, "/api/rooms": 503} {
		res, err := http.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		_ = res.Body.Close()
		if res.StatusCode != want || path == "/health" && m["version"] != "2.0.0" {
			t.Errorf("GET %s: %d %v, want %d", path, res.StatusCode, m, want)
		}
	}
}

// While starting, a body over the cap and an oversized header get the real
// server's JSON answers (the stand-in answered fasthttp's plain text, and
// refused bodies over 4 MiB the real server takes).
func TestServeStartingLimits(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	handoff := ServeStarting(ln, Starting{Version: Version, Ready: true})
	defer handoff()
	post := func(body []byte, cookie string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/api/v1/memory/write", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		st, _, m := doJSON(t, req)
		return st, m
	}
	if st, m := post(bytes.Repeat([]byte{' '}, 5<<20), ""); st != 503 {
		t.Errorf("5 MiB body while starting: %d %v, want 503 (the cap is %d)", st, m, MaxBodySize)
	}
	if st, m := post(bytes.Repeat([]byte{' '}, MaxBodySize+1), ""); st != 413 || m["code"] != codeValidation ||
		m["message"] != "Request body exceeds 16 MiB" {
		t.Errorf("body over the cap while starting: %d %v", st, m)
	}
	if st, m := post([]byte("{}"), "a="+strings.Repeat("x", 8<<10)); st != 503 {
		t.Errorf("8 KiB cookie while starting: %d %v, want 503", st, m)
	}
	if st, m := post([]byte("{}"), "a="+strings.Repeat("x", 20<<10)); st != 400 || m["code"] != codeValidation {
		t.Errorf("20 KiB cookie while starting: %d %v, want the JSON 400", st, m)
	}
}

// doJSON sends req and decodes its answer, which must be a JSON object.
func doJSON(t *testing.T, req *http.Request) (int, http.Header, map[string]any) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: %d %q is not JSON", req.Method, req.URL.Path, res.StatusCode, raw)
	}
	return res.StatusCode, res.Header, m
}

// While starting, the profiler answers behind the admin token, as it does
// once the node serves (a slow start is what an operator profiles); with
// no token configured, or a wrong one, it does not.
func TestServeStartingProfiler(t *testing.T) {
	for _, tc := range []struct {
		name, token, sent string
		want              int
	}{
		{"token", "secret", "secret", 200},
		{"wrong token", "secret", "nope", 401},
		{"no admin token configured", "", "secret", 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			handoff := ServeStarting(ln, Starting{Version: Version, Ready: true, AdminToken: tc.token})
			defer handoff()
			req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/admin/v1/debug/pprof/goroutine?debug=1", nil)
			req.Header.Set("X-Admin-Token", tc.sent)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.want, body)
			}
			if tc.want == 200 && !strings.Contains(string(body), "goroutine profile") {
				t.Fatalf("not a goroutine profile: %.200s", body)
			}
			if tc.want == 401 && bytes.Contains(body, []byte(tc.token)) {
				t.Fatalf("the answer holds the token: %s", body)
			}
		})
	}
}
