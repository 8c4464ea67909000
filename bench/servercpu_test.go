package bench

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestCPUSeconds reads the process collector's counter from /metrics, at
// the node's root whatever the REST base, and reports none when the
// endpoint or the counter is missing.
func TestCPUSeconds(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   float64
		ok     bool
	}{
		{"counter", 200, "# HELP process_cpu_seconds_total x\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 34.25\nprocess_open_fds 12\n", 34.25, true},
		{"exponent", 200, "go_goroutines 9\nprocess_cpu_seconds_total 1.5e+03\n", 1500, true},
		{"no counter", 200, "go_goroutines 9\n", 0, false},
		{"not a number", 200, "process_cpu_seconds_total x\n", 0, false},
		{"negative", 200, "process_cpu_seconds_total -1\n", 0, false},
		{"not served", 404, "404 page not found\n", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			api, err := NewAPI(srv.URL+"/api/v1", "", 1, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := api.cpuSeconds()
			if got != tc.want || ok != tc.ok || path != "/metrics" {
				t.Fatalf("cpuSeconds = %g, %v from %q; want %g, %v from /metrics", got, ok, path, tc.want, tc.ok)
			}
		})
	}
}

func TestServerCPU(t *testing.T) {
	ph := &PhaseResult{DurationS: 2, Completed: 400}
	c := serverCPU(10, 13, ph)
	if c == nil || c.Seconds != 3 || c.Cores != 1.5 || c.PerRequestUs != 7500 {
		t.Fatalf("serverCPU = %+v", c)
	}
	if c := serverCPU(13, 10, ph); c != nil {
		t.Fatalf("a counter that went back gave %+v", c)
	}
	if c := serverCPU(10, 13, &PhaseResult{}); c != nil {
		t.Fatalf("a phase of no duration gave %+v", c)
	}
	if c := serverCPU(10, 10.01, &PhaseResult{DurationS: 0.001}); c != nil {
		t.Fatalf("a phase of 1 ms (one counter tick) gave %+v", c)
	}
}
