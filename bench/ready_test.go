package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// readyServer answers /health and /health/ready, reporting ready from
// the after-th readiness call on (never when after is negative), always
// with status 200 as a hebb node does.
func readyServer(t *testing.T, after int64) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			fmt.Fprint(w, `{"status":"ok","database":false,"version":"1.0.0"}`)
		case "/health/ready":
			n := calls.Add(1)
			ok := after >= 0 && n > after
			fmt.Fprintf(w, `{"ready":%v,"checks":{"database":true,"engine":%v,"embedding":true},"version":"1.0.0"}`, ok, ok)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s, &calls
}

// TestConnectWaitsUntilReady checks that a run against a server that is
// not ready yet (a node replaying its log) says so and waits until the
// body of /health/ready reports ready, and that one already ready is not
// waited for.
func TestConnectWaitsUntilReady(t *testing.T) {
	for _, after := range []int64{0, 3} {
		s, calls := readyServer(t, after)
		var out bytes.Buffer
		cfg := &Config{URL: s.URL, Key: "mk_live_x", Workload: WorkloadSearch, Progress: &out}
		tg, err := connect(context.Background(), cfg, &Report{})
		if err != nil {
			t.Fatalf("ready after %d calls: %v", after, err)
		}
		if tg.rep.Server == nil || tg.rep.Server.Version != "1.0.0" {
			t.Fatalf("server info %+v", tg.rep.Server)
		}
		waited := strings.Contains(out.String(), "waiting for "+s.URL+" to be ready")
		if got := calls.Load(); got != after+1 || waited != (after > 0) {
			t.Fatalf("ready after %d calls: %d calls, said it waited %v (%q)", after, got, waited, out.String())
		}
	}
}

// TestAwaitReadyGivesUp checks that a server that never reports ready
// ends the wait with ErrNotReady naming the failing check, and that a
// cancelled context or a dead local server ends it at once.
func TestAwaitReadyGivesUp(t *testing.T) {
	s, _ := readyServer(t, -1)
	api, err := NewAPI(s.URL, "", 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = awaitReady(context.Background(), api, 300*time.Millisecond, nil)
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "failing checks: engine") {
		t.Fatalf("never ready: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := awaitReady(ctx, api, time.Minute, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	dead := errors.New("exited")
	if err := awaitReady(context.Background(), api, time.Minute, func() error { return dead }); !errors.Is(err, dead) {
		t.Fatalf("dead server: %v", err)
	}
}

// A URL whose /health/ready answers 404 is no hebb node (or a wrong path):
// waiting cannot change that, so the run ends at once, saying so.
func TestAwaitReadyFailsFastOn4xx(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	t.Cleanup(s.Close)
	api, err := NewAPI(s.URL, "", 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err = awaitReady(context.Background(), api, time.Minute, nil)
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("a 404 readiness: %v", err)
	}
	if d := time.Since(began); d > 30*time.Second { // a hang guard: the limit is a minute
		t.Errorf("gave up after %v", d)
	}
}
