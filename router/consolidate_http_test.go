package router_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/embedder"
)

// withConsolidation serves ts's cluster through a second router started with
// EnableConsolidation (serverOpts has no field for it) and returns a copy
// of ts that talks to it. Do not restart the copy.
func withConsolidation(t *testing.T, ts *testServer) *testServer {
	t.Helper()
	emb, err := embedder.New("hash")
	if err != nil {
		t.Fatalf("embedder: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := router.New(router.Config{PublicURL: "http://" + ln.Addr().String(), AdminToken: ts.Admin,
		EnableConsolidation: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, ts.cl, emb)
	go func() { _ = srv.Serve(ln) }()
	// Registered after newTestServer's cleanup, so it runs first.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	cs := *ts
	cs.srv = srv
	cs.URL = "http://" + ln.Addr().String()
	cs.Base = cs.URL + "/api/v1"
	return &cs
}

func TestConsolidateHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	t.Run("disabled by default", func(t *testing.T) { testConsolidateDisabled(t, ts) })
	t.Run("enabled", func(t *testing.T) { testConsolidateEnabled(t, withConsolidation(t, ts)) })
}

func testConsolidateDisabled(t *testing.T, ts *testServer) {
	for _, body := range []any{nil, map[string]any{}, map[string]any{"domain": "ops"}, map[string]any{"domain": nil}} {
		r := ts.do("POST", "/memory/consolidate", ts.Key, body)
		checkEnvelope(t, r, 503, "INTERNAL")
		if r.Body["retryable"] != false {
			t.Errorf("retryable %v, want false", r.Body["retryable"])
		}
		if memReason(r) != "consolidation_disabled" {
			t.Errorf("details.reason %q, want consolidation_disabled: %s", memReason(r), r.Raw)
		}
	}
	// A write endpoint: unknown fields are refused before the 503.
	checkValidation(t, ts.do("POST", "/memory/consolidate", ts.Key, map[string]any{"domain": "ops", "force": true}), "body", "force")
	checkValidationMessage(t, ts.do("POST", "/memory/consolidate", ts.Key, map[string]any{"domain": "XROOM:room_x"}), nonCanonicalRoomMsg)
	// So is a domain longer than §8's 100 characters, as on write and feedback.
	checkValidation(t, ts.do("POST", "/memory/consolidate", ts.Key, map[string]any{"domain": strings.Repeat("d", 101)}), "body", "domain")
	checkEnvelope(t, ts.do("POST", "/memory/consolidate", "", map[string]any{}), 401, "UNAUTHORIZED")
}

func testConsolidateEnabled(t *testing.T, ts *testServer) {
	_, key := ts.newOrg("consolidate")
	ops := map[string]any{"domain": "ops"}
	// Near-identical episodes (cosine ≥ 0.92 with the first under the hash
	// embedder, but not duplicates for the gate).
	members := []string{
		memWrite(t, ts, key, "The nightly backup job runs at 2am on the storage cluster", ops),
		memWrite(t, ts, key, "The nightly backup job runs at 2am on our storage cluster", ops),
		memWrite(t, ts, key, "Nightly backup job runs at 2am on the storage cluster", ops),
		memWrite(t, ts, key, "The nightly backup job runs at 2am on the storage clusters", ops),
	}
	loners := []string{
		memWrite(t, ts, key, "The coffee machine on floor three is broken", ops),
		memWrite(t, ts, key, "Payroll runs on the last Friday of the month", ops),
	}
	strong := memWrite(t, ts, key, "The VPN certificate expires in March", ops)
	for i := 0; i < 5; i++ { // valence 0.3, 0.51, 0.657, 0.76, 0.832
		mustStatus(t, ts.do("POST", "/memory/feedback", key, map[string]any{"atom_ids": []string{strong}, "outcome": 1}), 200)
	}
	elsewhere := memWrite(t, ts, key, "The nightly backup job runs at 2am on the storage cluster", map[string]any{"domain": "other"})

	r := ts.do("POST", "/memory/consolidate", key, ops)
	mustStatus(t, r, 200)
	want := map[string]float64{"atoms_before": 7, "atoms_after": 4, "prototypes_created": 1, "singletons_protected": 1}
	for k, v := range want {
		if num(r.Body[k]) != v {
			t.Errorf("%s %v, want %v: %s", k, r.Body[k], v, r.Raw)
		}
	}
	if r.Body["domain"] != "ops" {
		t.Errorf("domain %v", r.Body["domain"])
	}
	if ratio := num(r.Body["compression_ratio"]); math.Abs(ratio-num(r.Body["atoms_after"])/num(r.Body["atoms_before"])) > 1e-9 {
		t.Errorf("compression_ratio %v, want atoms_after/atoms_before", ratio)
	}
	if _, ok := r.Body["duration_ms"].(float64); !ok {
		t.Errorf("duration_ms missing: %s", r.Raw)
	}

	t.Run("prototype is searchable, members are not", func(t *testing.T) {
		rd := ts.do("POST", "/memory/read", key, map[string]any{"query": "nightly backup job storage cluster", "domain": "ops", "min_relevance": 0, "top_k": 20})
		mustStatus(t, rd, 200)
		ids := itemIDs(rd)
		for _, m := range members {
			if contains(ids, m) {
				t.Errorf("merged member %s still returned by search", m)
			}
		}
		var proto string
		for _, id := range ids {
			if !contains(loners, id) && id != strong {
				proto = id
			}
		}
		if proto == "" {
			t.Fatalf("no prototype in the read: %s", rd.Raw)
		}
		if ids[0] != proto {
			t.Errorf("prototype not first for the members' query: %v", ids)
		}
		a := memAtom(t, ts, key, proto)
		if a["atom_type"] != "prototype" || a["domain"] != "ops" {
			t.Errorf("prototype envelope %v", a)
		}
		if a["content"] != "The nightly backup job runs at 2am on the storage cluster" {
			t.Errorf("prototype content %v", a["content"])
		}
	})

	t.Run("members, loners and the singleton stay fetchable", func(t *testing.T) {
		for _, id := range append(append([]string{}, members...), loners...) {
			if a := memAtom(t, ts, key, id); a["atom_type"] != "episode" {
				t.Errorf("%s atom_type %v", id, a["atom_type"])
			}
		}
		if a := memAtom(t, ts, key, strong); a["atom_type"] != "singleton" {
			t.Errorf("strong-valence atom type %v, want singleton", a["atom_type"])
		}
		if a := memAtom(t, ts, key, elsewhere); a["atom_type"] != "episode" {
			t.Errorf("atom of another domain changed: %v", a)
		}
		st := ts.do("GET", "/memory/stats", key, nil)
		if num(st.Body["prototypes"]) != 1 || num(st.Body["singletons"]) != 1 {
			t.Errorf("stats %s", st.Raw)
		}
	})

	t.Run("a second run merges nothing", func(t *testing.T) {
		r := ts.do("POST", "/memory/consolidate", key, ops)
		mustStatus(t, r, 200)
		if num(r.Body["prototypes_created"]) != 0 || num(r.Body["atoms_before"]) != num(r.Body["atoms_after"]) || num(r.Body["compression_ratio"]) != 1 {
			t.Errorf("second run: %s", r.Raw)
		}
	})

	t.Run("a room is consolidated in the room", func(t *testing.T) {
		rr := ts.do("POST", "/memory/rooms", key, map[string]any{"name": "consolidation room"})
		mustStatus(t, rr, 200)
		addr := str(rr.Body["address"])
		in := map[string]any{"domain": addr}
		a := memWrite(t, ts, key, "The nightly backup job runs at 2am on the storage cluster", in)
		b := memWrite(t, ts, key, "The nightly backup job runs at 2am on our storage cluster", in)
		r := ts.do("POST", "/memory/consolidate", key, in)
		mustStatus(t, r, 200)
		if r.Body["domain"] != addr || num(r.Body["atoms_before"]) != 2 || num(r.Body["atoms_after"]) != 1 || num(r.Body["prototypes_created"]) != 1 {
			t.Errorf("room consolidation: %s", r.Raw)
		}
		rd := ts.do("POST", "/memory/read", key, map[string]any{"query": "nightly backup job", "domain": addr, "min_relevance": 0})
		mustStatus(t, rd, 200)
		if ids := itemIDs(rd); len(ids) != 1 || ids[0] == a || ids[0] == b {
			t.Errorf("room read after consolidation: %s", rd.Raw)
		}
	})

	t.Run("default domain is general, empty domain answers zeros", func(t *testing.T) {
		r := ts.do("POST", "/memory/consolidate", key, nil)
		mustStatus(t, r, 200)
		if r.Body["domain"] != "general" || num(r.Body["atoms_before"]) != 0 || num(r.Body["atoms_after"]) != 0 {
			t.Errorf("empty general domain: %s", r.Raw)
		}
		if c := num(r.Body["compression_ratio"]); c < 0 || c > 1 {
			t.Errorf("compression_ratio %v outside [0, 1]", c)
		}
	})
}
