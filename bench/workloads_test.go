package bench

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/embedder"
)

const testAdminToken = "bench-admin"

// startServer runs one node (cluster + router) in process on loopback and
// returns its REST base and the default org's key.
func startServer(t *testing.T) (base, key string) {
	t.Helper()
	emb, err := embedder.New("hash")
	if err != nil {
		t.Fatalf("embedder: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := cluster.Start(ctx, cluster.Config{DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0",
		HTTPAddr: ln.Addr().String(), Groups: 2, Replicas: 1, Embedder: emb.Name(), Dim: emb.Dim(), Logger: log})
	if err != nil {
		_ = ln.Close()
		t.Fatalf("cluster.Start: %v", err)
	}
	url := "http://" + ln.Addr().String()
	srv := router.New(router.Config{PublicURL: url, AdminToken: testAdminToken, Logger: log}, cl, emb)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := cl.Close(); err != nil {
			t.Errorf("cluster close: %v", err)
		}
	})
	_, raw, _, err := router.CreateOrg(ctx, cl, "default", "")
	if err != nil {
		t.Fatalf("cannot create org: %v", err)
	}
	return url + "/api/v1", raw
}

// TestEndToEnd runs every server workload briefly against an in-process
// node over real HTTP and checks that the requests succeed and the report
// is complete.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	base, key := startServer(t)
	tests := []struct {
		name, workload string
		edit           func(*Config)
		ops            []string
	}{
		{name: "search", workload: WorkloadSearch, ops: []string{OpSearch}},
		{name: "single writes", workload: WorkloadWrite, ops: []string{OpWrite}},
		{name: "batched writes closed loop", workload: WorkloadWrite, edit: func(c *Config) { c.Batch, c.Rate = 5, 0 },
			ops: []string{OpWriteBatch}},
		{name: "mixed", workload: WorkloadMixed, edit: func(c *Config) { c.Rate, c.Duration = 100, time.Second },
			ops: []string{OpSearch, OpWrite, OpFeedback}},
		{name: "tenants", workload: WorkloadTenants, edit: func(c *Config) { c.Tenants, c.Size = 4, 80 },
			ops: []string{OpSearch, OpWrite}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Workload, cfg.URL, cfg.Key, cfg.AdminToken = tc.workload, base, key, testAdminToken
			cfg.Rate, cfg.Duration, cfg.Concurrency, cfg.Size = 40, 500*time.Millisecond, 4, 300
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.Server == nil || rep.Server.Version == "" || len(rep.Phases) != 1 {
				t.Fatalf("report lacks the server or its phase: %+v", rep)
			}
			ph := rep.Phases[0]
			if ph.Completed == 0 || ph.Errors != 0 {
				t.Fatalf("%d completed, %d errors %v", ph.Completed, ph.Errors, ph.ErrorsByCode)
			}
			for _, op := range tc.ops {
				if ph.Ops[op].Count == 0 {
					t.Errorf("no %s in the phase: %v", op, ph.Ops)
				}
			}
			if tc.workload == WorkloadSearch {
				checkServerTime(t, rep)
			}
			// The node is in this process: its CPU counter counts the
			// client too, but it was read, and it grew.
			if c := ph.ServerCPU; c == nil || c.Seconds <= 0 || c.Cores <= 0 || c.PerRequestUs <= 0 {
				t.Errorf("server CPU not measured: %+v", c)
			} else if ph.ItemsPerRequest > 1 && c.PerItemUs != c.PerRequestUs/float64(ph.ItemsPerRequest) {
				t.Errorf("per item %g µs, per request %g µs, %d items", c.PerItemUs, c.PerRequestUs, ph.ItemsPerRequest)
			}
			if n := ph.Tags["filtered"]; n > 0 {
				t.Errorf("%d writes were refused as duplicates", n)
			}
			if p := rep.Populate; tc.workload != WorkloadWrite && (p == nil || p.Existing+p.Added < p.Target) {
				t.Errorf("populate fell short: %+v", p)
			}
		})
	}
	t.Run("search resumes the populated tenant", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Workload, cfg.URL, cfg.Key = WorkloadSearch, base, key
		cfg.Rate, cfg.Duration, cfg.Concurrency, cfg.Size = 20, 200*time.Millisecond, 2, 300
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if rep.Populate.Added != 0 {
			t.Errorf("a tenant that already holds %d atoms got %d more", rep.Populate.Existing, rep.Populate.Added)
		}
	})
	t.Run("tenants needs the admin token", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Workload, cfg.URL, cfg.Key, cfg.Tenants, cfg.Size = WorkloadTenants, base, key, 2, 10
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Error("tenants ran without an admin token")
		}
	})
}

// checkServerTime checks a search run's floor and the server's own times:
// every search answered reports one, inside its round trip.
func checkServerTime(t *testing.T, rep *Report) {
	t.Helper()
	for _, f := range []*Latency{rep.Floor, rep.IdleFloor} {
		if f == nil || f.Count != floorCalls || f.P50 <= 0 {
			t.Errorf("round-trip floor %+v, want %d calls", f, floorCalls)
		}
	}
	o := rep.Phases[0].Ops[OpSearch]
	switch s := o.Server; {
	case s == nil:
		t.Error("no server time recorded")
	case s.Count != o.Count:
		t.Errorf("%d server times for %d searches", s.Count, o.Count)
	case s.P50 <= 0 || s.P50 > o.Service.P50 || s.Max > o.Service.Max:
		t.Errorf("server time %+v outside the round trip %+v", *s, o.Service)
	}
}
