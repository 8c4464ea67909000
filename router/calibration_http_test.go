package router_test

import (
	"math"
	"testing"

	"github.com/hebbdb/hebb/router/embedder"
)

// calibrated is the hash embedder with a score exponent, as the builtin
// embedder declares one (embedder.Calibrated).
type calibrated struct{ *embedder.Hash }

func (calibrated) ScoreExponent() float64 { return 0.3 }

// An embedder's score exponent reaches the search: semantic relevance is
// similarity^γ, and min_relevance applies to it, so items whose raw cosine is
// below the default 0.3 are returned.
func TestCalibratedScoresHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, withEmbedder(calibrated{embedder.NewHash(embedder.HashDim)}))
	for _, c := range []string{"the quarterly budget review happens in march",
		"our team prefers tabs over spaces", "the cafeteria serves soup on fridays",
		"deployments need two approvals", "the office plants get watered weekly", "invoices go out monthly"} {
		ts.write(c, nil)
	}
	// No word in common with any memory: only cosines, all small, and no
	// concept match to hide behind.
	r := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": "xylophone zebra", "include_associations": false})
	mustStatus(t, r, 200)
	low := 0
	for _, it := range items(r) {
		rel, sim := num(it["relevance"]), num(it["similarity"])
		if it["source"] == "semantic" && math.Abs(rel-math.Pow(sim, 0.3)) > 1e-6 {
			t.Errorf("relevance %v for similarity %v, want similarity^0.3 = %v", rel, sim, math.Pow(sim, 0.3))
		}
		if rel < 0.3 {
			t.Errorf("item below min_relevance returned: %v", it)
		}
		if it["source"] == "semantic" && sim < 0.3 {
			low++
		}
	}
	if low == 0 {
		t.Fatalf("no semantic item with a cosine below 0.3 returned: %s", r.Raw)
	}
}
