package router_test

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"
)

// memEdges renders a graph response's edges as sorted "a-b" strings.
func memEdges(r resp) []string {
	var out []string
	for _, e := range list(r.Body["edges"]) {
		m := obj(e)
		out = append(out, str(m["source"])+"-"+str(m["target"]))
	}
	sort.Strings(out)
	return out
}

// checkGraph asserts the response shape, the edge fields and that every
// node's degree is the number of returned edges touching it.
func checkGraph(t *testing.T, r resp) {
	t.Helper()
	mustStatus(t, r, 200)
	if got := strings.Join(keys(r.Body), ","); got != "edges,min_weight_applied,nodes,truncated" {
		t.Fatalf("graph keys %s: %s", got, r.Raw)
	}
	degree := map[string]int{}
	for i, e := range list(r.Body["edges"]) {
		m := obj(e)
		if got := strings.Join(keys(m), ","); got != "count,source,target,updated_at,valence,weight" {
			t.Errorf("edge %d keys %s", i, got)
		}
		src, dst := str(m["source"]), str(m["target"])
		if src == "" || dst == "" || src == dst {
			t.Errorf("edge %d endpoints %q %q", i, src, dst)
		}
		if w := num(m["weight"]); w < 0 || w > 1 {
			t.Errorf("edge %d weight %v", i, w)
		}
		if v := num(m["valence"]); v < -1 || v > 1 {
			t.Errorf("edge %d valence %v", i, v)
		}
		if num(m["count"]) < 1 {
			t.Errorf("edge %d count %v", i, m["count"])
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000000Z", str(m["updated_at"])); err != nil {
			t.Errorf("edge %d updated_at %v", i, m["updated_at"])
		}
		degree[src]++
		degree[dst]++
	}
	nodes := list(r.Body["nodes"])
	if nodes == nil {
		t.Fatalf("nodes is not a list: %s", r.Raw)
	}
	if len(nodes) != len(degree) {
		t.Errorf("%d nodes, %d concepts on the edges: %s", len(nodes), len(degree), r.Raw)
	}
	for _, n := range nodes {
		m := obj(n)
		if int(num(m["degree"])) != degree[str(m["concept"])] {
			t.Errorf("node %v: degree %v, want %d", m["concept"], m["degree"], degree[str(m["concept"])])
		}
	}
}

func TestGraphHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, key := ts.newOrg("graph")
	hub := memWrite(t, ts, key, "Hub atom for the graph", map[string]any{"concepts": []string{"alpha", "beta", "gamma", "delta"}})
	memWrite(t, ts, key, "Chain link one", map[string]any{"concepts": []string{"delta", "epsilon"}})
	memWrite(t, ts, key, "Chain link two", map[string]any{"concepts": []string{"epsilon", "zeta"}})
	weak := memWrite(t, ts, key, "A lonely atom", map[string]any{"concepts": []string{"omega"}})
	// Feedback builds cross-atom rows: alpha..delta with "strong" at 0.2,
	// omega with "tiny" at 0.2·0.1 = 0.02 (below the deep floor).
	fb := func(id string, outcome float64, qc string) {
		r := ts.do("POST", "/memory/feedback", key, map[string]any{"atom_ids": []string{id}, "outcome": outcome, "query_concepts": []string{qc}})
		mustStatus(t, r, 200)
	}
	fb(hub, 1, "strong")
	fb(weak, 0.1, "tiny")

	graph := func(body map[string]any) resp {
		return ts.do("POST", "/memory/graph", key, body)
	}

	t.Run("depth 1 reads the seed's rows, strongest first", func(t *testing.T) {
		r := graph(map[string]any{"seeds": []string{"alpha"}})
		checkGraph(t, r)
		if got := strings.Join(memEdges(r), " "); got != "alpha-beta alpha-delta alpha-gamma alpha-strong" {
			t.Errorf("edges %s", got)
		}
		first := obj(list(r.Body["edges"])[0])
		if first["source"] != "alpha" || first["target"] != "strong" || math.Abs(num(first["weight"])-0.2) > 1e-9 ||
			math.Abs(num(first["valence"])-0.3) > 1e-9 || num(first["count"]) != 1 {
			t.Errorf("strongest edge %v, want alpha-strong weight 0.2 valence 0.3 count 1", first)
		}
		for _, e := range list(r.Body["edges"])[1:] {
			if m := obj(e); math.Abs(num(m["weight"])-0.05) > 1e-9 || num(m["valence"]) != 0 {
				t.Errorf("within-atom edge %v, want weight 0.05 valence 0", m)
			}
		}
		if r.Body["min_weight_applied"] != 0.0 || r.Body["truncated"] != false {
			t.Errorf("min_weight_applied %v truncated %v", r.Body["min_weight_applied"], r.Body["truncated"])
		}
	})

	t.Run("depth 2 walks one more hop above the floor", func(t *testing.T) {
		r := graph(map[string]any{"seeds": []string{"epsilon"}, "depth": 2})
		checkGraph(t, r)
		want := "alpha-delta beta-delta delta-epsilon delta-gamma delta-strong epsilon-zeta"
		if got := strings.Join(memEdges(r), " "); got != want {
			t.Errorf("edges %s, want %s", got, want)
		}
		if r.Body["min_weight_applied"] != 0.05 {
			t.Errorf("min_weight_applied %v, want 0.05", r.Body["min_weight_applied"])
		}
		r = graph(map[string]any{"seeds": []string{"zeta"}, "depth": 3})
		checkGraph(t, r)
		if n := len(list(r.Body["edges"])); n != 6 {
			t.Errorf("depth 3 from zeta: %d edges: %v", n, memEdges(r))
		}
	})

	t.Run("min_weight_applied and the floors", func(t *testing.T) {
		cases := []struct {
			name    string
			body    map[string]any
			applied float64
			edges   string
		}{
			{"depth 1 no floor", map[string]any{"seeds": []string{"omega"}}, 0, "omega-tiny"},
			{"depth 2 server floor hides a 0.02 row", map[string]any{"seeds": []string{"omega"}, "depth": 2}, 0.05, ""},
			{"depth 3 server floor", map[string]any{"seeds": []string{"omega"}, "depth": 3}, 0.05, ""},
			{"explicit 0 at depth 2", map[string]any{"seeds": []string{"omega"}, "depth": 2, "min_weight": 0}, 0, "omega-tiny"},
			{"explicit null is the default", map[string]any{"seeds": []string{"omega"}, "depth": 2, "min_weight": nil}, 0.05, ""},
			{"explicit 0.1 at depth 1", map[string]any{"seeds": []string{"alpha"}, "min_weight": 0.1}, 0.1, "alpha-strong"},
			{"explicit 0.01 at depth 1", map[string]any{"seeds": []string{"omega"}, "min_weight": 0.01}, 0.01, "omega-tiny"},
			{"explicit above every row", map[string]any{"seeds": []string{"alpha"}, "min_weight": 5}, 5, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := graph(tc.body)
				checkGraph(t, r)
				if num(r.Body["min_weight_applied"]) != tc.applied {
					t.Errorf("min_weight_applied %v, want %v", r.Body["min_weight_applied"], tc.applied)
				}
				if got := strings.Join(memEdges(r), " "); got != tc.edges {
					t.Errorf("edges %q, want %q", got, tc.edges)
				}
			})
		}
	})

	t.Run("limit truncates", func(t *testing.T) {
		r := graph(map[string]any{"seeds": []string{"alpha"}, "limit": 2})
		checkGraph(t, r)
		if n := len(list(r.Body["edges"])); n != 2 || r.Body["truncated"] != true {
			t.Errorf("limit 2: %d edges truncated %v", n, r.Body["truncated"])
		}
		r = graph(map[string]any{"seeds": []string{"alpha"}, "limit": 4})
		checkGraph(t, r)
		if n := len(list(r.Body["edges"])); n != 4 || r.Body["truncated"] != false {
			t.Errorf("limit 4 (exactly the rows): %d edges truncated %v", n, r.Body["truncated"])
		}
	})

	t.Run("per-hop row cap truncates", func(t *testing.T) {
		_, k := ts.newOrg("graph-cap")
		id := memWrite(t, ts, k, "The hub of a wide star", map[string]any{"concepts": []string{"hub"}})
		qc := make([]string, 251)
		for i := range qc {
			qc[i] = fmt.Sprintf("spoke%03d", i)
		}
		fb := ts.do("POST", "/memory/feedback", k, map[string]any{"atom_ids": []string{id}, "outcome": 1, "query_concepts": qc})
		mustStatus(t, fb, 200)
		if num(fb.Body["coactivation_edges"]) != 251 {
			t.Fatalf("coactivation_edges %v, want 251", fb.Body["coactivation_edges"])
		}
		r := ts.do("POST", "/memory/graph", k, map[string]any{"seeds": []string{"hub"}, "limit": 500})
		checkGraph(t, r)
		if n := len(list(r.Body["edges"])); n != 250 || r.Body["truncated"] != true {
			t.Errorf("%d edges truncated %v, want the 250-row hop cap", n, r.Body["truncated"])
		}
		for _, n := range list(r.Body["nodes"]) {
			if m := obj(n); m["concept"] == "hub" && num(m["degree"]) != 250 {
				t.Errorf("hub degree %v, want 250", m["degree"])
			}
		}
	})

	t.Run("seeds", func(t *testing.T) {
		r := graph(map[string]any{"seeds": []string{"no-such-concept"}})
		checkGraph(t, r)
		if string(r.Raw) != `{"nodes":[],"edges":[],"truncated":false,"min_weight_applied":0}` {
			t.Errorf("unknown seed: %s", r.Raw)
		}
		r = graph(map[string]any{"seeds": []string{"  ALPHA "}})
		checkGraph(t, r)
		if len(list(r.Body["edges"])) != 4 {
			t.Errorf("seed not normalised: %s", r.Raw)
		}
		r = graph(map[string]any{"seeds": []string{"alpha", "alpha", "omega"}})
		checkGraph(t, r)
		if got := strings.Join(memEdges(r), " "); got != "alpha-beta alpha-delta alpha-gamma alpha-strong omega-tiny" {
			t.Errorf("several seeds: %s", got)
		}
		twenty := make([]string, 20)
		for i := range twenty {
			twenty[i] = fmt.Sprintf("seed%d", i)
		}
		twenty[19] = strings.Repeat("s", 200)
		checkGraph(t, graph(map[string]any{"seeds": twenty}))
	})

	t.Run("validation", func(t *testing.T) {
		many := make([]string, 21)
		for i := range many {
			many[i] = fmt.Sprintf("seed%d", i)
		}
		cases := []struct {
			name string
			body any
			loc  string
		}{
			{"seeds missing", map[string]any{}, "body.seeds"},
			{"seeds empty", map[string]any{"seeds": []string{}}, "body.seeds"},
			{"21 seeds", map[string]any{"seeds": many}, "body.seeds"},
			{"blank seed", map[string]any{"seeds": []string{"alpha", "  "}}, "body.seeds.1"},
			{"empty seed", map[string]any{"seeds": []string{""}}, "body.seeds.0"},
			{"201-char seed", map[string]any{"seeds": []string{strings.Repeat("s", 201)}}, "body.seeds.0"},
			{"seed not a string", map[string]any{"seeds": []any{5}}, "body.seeds.0"},
			{"depth 0", map[string]any{"seeds": []string{"alpha"}, "depth": 0}, "body.depth"},
			{"depth 4", map[string]any{"seeds": []string{"alpha"}, "depth": 4}, "body.depth"},
			{"limit 0", map[string]any{"seeds": []string{"alpha"}, "limit": 0}, "body.limit"},
			{"limit 501", map[string]any{"seeds": []string{"alpha"}, "limit": 501}, "body.limit"},
			{"negative min_weight", map[string]any{"seeds": []string{"alpha"}, "min_weight": -0.01}, "body.min_weight"},
			{"min_weight not a number", map[string]any{"seeds": []string{"alpha"}, "min_weight": "heavy"}, "body.min_weight"},
			// JSON has no NaN or Inf; an overflowing literal is the nearest
			// thing. It is refused as a body error (decode.go does not
			// locate it at min_weight).
			{"non-finite min_weight", `{"seeds":["alpha"],"min_weight":1e999}`, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := ts.do("POST", "/memory/graph", key, tc.body)
				checkValidation(t, r)
				if tc.loc != "" {
					memHasLoc(t, r, tc.loc)
				}
			})
		}
		for _, ok := range []map[string]any{
			{"seeds": []string{"alpha"}, "depth": 3, "limit": 500, "min_weight": 0},
			{"seeds": []string{"alpha"}, "depth": 1, "limit": 1},
			{"seeds": []string{"alpha"}, "domain": "anything", "unknown": true},
		} {
			checkGraph(t, graph(ok))
		}
	})

	t.Run("room domain", func(t *testing.T) {
		r := graph(map[string]any{"seeds": []string{"alpha"}, "domain": testRoom})
		checkEnvelope(t, r, 404, "NOT_FOUND")
		if r.Body["message"] != "Room not found" {
			t.Errorf("message %v", r.Body["message"])
		}
	})
}
