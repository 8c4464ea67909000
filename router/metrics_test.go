package router_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// A client's made-up methods share one label: each distinct label is a
// series kept until the process ends.
func TestMetricsMethodLabel(t *testing.T) {
	ts := newTestServer(t)
	for i := range 5 {
		req, err := http.NewRequest(fmt.Sprintf("MADEUP%d", i), ts.URL+"/api/v1/nope", nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{}
	for _, f := range families {
		if f.GetName() != "hebb_http_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" {
					methods[l.GetValue()] = true
				}
			}
		}
	}
	if !methods["other"] {
		t.Errorf("no series of method other: %v", methods)
	}
	for m := range methods {
		switch m {
		case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "other":
		default:
			t.Errorf("a series of method %q", m)
		}
	}
}
