package raftfsm

import (
	"fmt"
	"math"
	"testing"
)

func TestFeedbackValence(t *testing.T) {
	tests := []struct {
		name     string
		outcomes []float64
	}{
		{"positive", []float64{1}},
		{"converges toward the outcome", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"negative then positive", []float64{-1, -0.5, 0.8}},
		{"outcome clamped to [-1, 1]", []float64{5, 5, -7}},
		{"neutral decays", []float64{1, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newFixture(t)
			id := x.put("a", "d", oneHot(0))
			want := 0.0
			for _, o := range tc.outcomes {
				r := x.feedback(o, []ID{id})
				o = math.Max(-1, math.Min(1, o))
				want = math.Max(-1, math.Min(1, want+0.3*(o-want)))
				if r.Updated != 1 || !near(r.AvgValence, want) {
					t.Fatalf("result %+v, want valence %v", r, want)
				}
			}
			if got := x.get(id).Valence; !near(got, want) || got < -1 || got > 1 {
				t.Fatalf("valence %v, want %v", got, want)
			}
		})
	}
}

func TestFeedbackCounts(t *testing.T) {
	x := newFixture(t)
	a := x.put("a", "d", oneHot(0), "go", "raft")
	b := x.put("b", "d", oneHot(1), "raft", "bolt")
	secret := x.secret("k", "d")
	withinAtom := x.f.Stats(x.tenant).HebbianEdges // go-raft, bolt-raft
	if withinAtom != 2 {
		t.Fatalf("within-atom edges %d, want 2", withinAtom)
	}
	_, at := x.next()
	r := x.apply(&FeedbackCmd{Tenant: x.tenant, IDs: []ID{a, b, a, secret, mkID(555)}, Outcome: 0.5,
		Concepts: []string{"extra"}, QueryConcepts: []string{"consensus", "raft"}, At: at}).(*FeedbackResult)
	// Atom concepts ∪ {extra} × query concepts, minus raft–raft:
	// a: go, raft, extra × consensus, raft → 5 edges; b adds bolt–consensus,
	// bolt–raft (existing row) → 7 distinct rows touched.
	if r.Updated != 2 || r.CoactivationEdges != 7 || !near(r.AvgValence, 0.15) {
		t.Fatalf("result %+v", r)
	}
	// New rows: go–consensus, raft–consensus, extra–consensus, extra–raft,
	// bolt–consensus.
	if n := x.f.Stats(x.tenant).HebbianEdges; n != 2+5 {
		t.Fatalf("edges %d, want 7", n)
	}
	x.f.mu.RLock()
	e := x.f.tenants[x.tenant].edges.get("bolt", "raft")
	x.f.mu.RUnlock()
	// Written once (0.05), then reinforced with η·|outcome| = 0.1.
	if want := 0.05 + 0.1*(1-0.05); e == nil || !near(e.Weight, want) || e.Count != 2 || !near(e.Valence, 0.15) || e.UpdatedAt != at {
		t.Fatalf("bolt-raft edge %+v, want weight %v count 2 valence 0.15", e, want)
	}
	if r := x.feedback(1, []ID{mkID(556)}); r.Updated != 0 || r.AvgValence != 0 || r.CoactivationEdges != 0 {
		t.Fatalf("feedback on nothing: %+v", r)
	}
	if r := (&fixture{t: t, f: x.f, tenant: "nobody"}).feedback(1, []ID{a}); r.Updated != 0 {
		t.Fatalf("feedback in another tenant: %+v", r)
	}
}

func TestEdgeWeightBounded(t *testing.T) {
	x := newFixture(t)
	a := x.put("a", "d", oneHot(0), "x")
	for range 200 {
		x.feedback(1, []ID{a}, "y")
	}
	x.f.mu.RLock()
	e := x.f.tenants[x.tenant].edges.get("x", "y")
	x.f.mu.RUnlock()
	if e.Weight > MaxWeight || e.Weight < 0.999 || e.Valence > 1 || e.Count != 200 {
		t.Fatalf("edge %+v", e)
	}
}

func TestWithinAtomEdgesCapped(t *testing.T) {
	x := newFixture(t)
	var concepts []string
	for i := range 20 {
		concepts = append(concepts, string(rune('a'+i)))
	}
	x.put("many concepts", "d", oneHot(0), concepts...)
	if n := x.f.Stats(x.tenant).HebbianEdges; n != maxEdgeConcepts*(maxEdgeConcepts-1)/2 {
		t.Fatalf("%d within-atom edges, want pairs of the first %d concepts only", n, maxEdgeConcepts)
	}
	x.f.mu.RLock()
	e := x.f.tenants[x.tenant].edges.get("a", "b")
	x.f.mu.RUnlock()
	if e == nil || !near(e.Weight, writeEta) || e.Count != 1 || e.Valence != 0 {
		t.Fatalf("within-atom edge %+v", e)
	}
}

// A pair named on both sides of a feedback (music–xylophone and
// xylophone–music) takes one step, as a pair named once does: edges are
// undirected.
func TestFeedbackStepsEachPairOnce(t *testing.T) {
	weight := func(query ...string) (float64, int64) {
		x := newFixture(t)
		a := x.put("xylophone lessons in the music wing", "d", oneHot(0), "xylophone", "music")
		if r := x.feedback(1, []ID{a}, query...); r.CoactivationEdges != 1 {
			t.Fatalf("query %v: %d edges touched, want 1", query, r.CoactivationEdges)
		}
		x.f.mu.RLock()
		defer x.f.mu.RUnlock()
		e := x.f.tenants[x.tenant].edges.get("music", "xylophone")
		return e.Weight, e.Count
	}
	once, n1 := weight("xylophone")
	both, n2 := weight("xylophone", "music")
	if !near(once, both) || n1 != 2 || n2 != 2 {
		t.Fatalf("one side: weight %v count %d; both sides: weight %v count %d", once, n1, both, n2)
	}
}

// concepts alone (no query_concepts) are reinforced with the atoms'
// concepts and each other: alone they used to reinforce nothing.
func TestFeedbackConceptsAlone(t *testing.T) {
	x := newFixture(t)
	a := x.put("rehearsal notes", "d", oneHot(0), "rehearsal")
	_, at := x.next()
	r := x.apply(&FeedbackCmd{Tenant: x.tenant, IDs: []ID{a}, Outcome: 1, Concepts: []string{"orchestra"}, At: at}).(*FeedbackResult)
	x.f.mu.RLock()
	e := x.f.tenants[x.tenant].edges.get("orchestra", "rehearsal")
	x.f.mu.RUnlock()
	if r.CoactivationEdges != 1 || e == nil || e.Weight <= 0 {
		t.Fatalf("feedback with concepts only: %+v, edge %+v", r, e)
	}
}

// Deleting a prototype removes its row only: the episodes it stood for are
// found again, and consolidation can group them again.
func TestDeletePrototypeReleasesMembers(t *testing.T) {
	x := newFixture(t)
	a := x.put("invoices need the finance lead", "inv", oneHot(0))
	b := x.put("invoices need the finance lead.", "inv", mix(0, 1, 0.97))
	consolidate := func() *ConsolidateResult {
		_, at := x.next()
		return x.apply(&ConsolidateCmd{Tenant: x.tenant, Domain: "inv", At: at, BaseID: mkID(900 + int(at%50))}).(*ConsolidateResult)
	}
	if r := consolidate(); r.PrototypesCreated != 1 {
		t.Fatalf("consolidation: %+v", r)
	}
	proto := x.get(a).MergedInto
	if p, want := x.get(proto), (x.get(a).Importance+x.get(b).Importance)/2; !near(p.Importance, want) || want == 0 {
		t.Errorf("prototype importance %v, want the members' mean %v", p.Importance, want)
	}
	found := func() map[ID]bool {
		out := map[ID]bool{}
		for _, id := range itemIDs(x.read(ReadRequest{Vector: oneHot(0), TopK: 10, MinRelevance: -1}).Items) {
			out[id] = true
		}
		return out
	}
	if f := found(); !f[proto] || f[a] || f[b] {
		t.Fatalf("after consolidation the search found %v", f)
	}
	if r := x.deleteAtom(proto); r.Deleted != 1 {
		t.Fatalf("delete: %+v", r)
	}
	if f := found(); !f[a] || !f[b] {
		t.Fatalf("after the prototype's delete the search found %v", f)
	}
	if r := consolidate(); r.AtomsBefore != 2 || r.PrototypesCreated != 1 {
		t.Fatalf("consolidation after the delete: %+v", r)
	}
}

// One feedback call steps at most maxFeedbackPairs concept pairs: three
// atoms of 256 concepts against 256 query concepts (196,608 pairs) held
// the group's apply for seconds. Every atom's valence is still learned.
func TestFeedbackPairsBounded(t *testing.T) {
	x := newFixture(t)
	var ids []ID
	for k := range 3 {
		concepts := make([]string, 256)
		for i := range concepts {
			concepts[i] = fmt.Sprintf("a%d-%d", k, i)
		}
		ids = append(ids, x.put(fmt.Sprintf("atom %d", k), "d", oneHot(k), concepts...))
	}
	query := make([]string, 256)
	for i := range query {
		query[i] = fmt.Sprintf("q%d", i)
	}
	before := x.f.Stats(x.tenant).HebbianEdges
	r := x.feedback(1, ids, query...)
	if r.Updated != 3 || r.CoactivationEdges != maxFeedbackPairs {
		t.Fatalf("updated %d, %d edges touched; want 3 and %d", r.Updated, r.CoactivationEdges, maxFeedbackPairs)
	}
	if n := x.f.Stats(x.tenant).HebbianEdges - before; n != maxFeedbackPairs {
		t.Fatalf("%d edges added, want %d", n, maxFeedbackPairs)
	}
	for _, id := range ids {
		if v := x.get(id).Valence; !near(v, 0.3) {
			t.Fatalf("valence %v, want 0.3", v)
		}
	}
}

// Feedback makes no edge row past the tenant's budget (feedbackEdgeBase +
// feedbackEdgesPerAtom an atom) and interns no concept for the rows it
// does not make; it still steps the rows that exist. Calls of fresh
// concepts made 65,536 rows each: unbounded memory for one key.
func TestFeedbackEdgeBudget(t *testing.T) {
	x := newFixture(t)
	concepts := make([]string, 256)
	for i := range concepts {
		concepts[i] = fmt.Sprintf("a%d", i)
	}
	id := x.put("atom", "d", oneHot(0), concepts...)
	fresh := func(call int) []string {
		q := make([]string, 256)
		for i := range q {
			q[i] = fmt.Sprintf("q%d-%d", call, i)
		}
		return q
	}
	tn := x.f.tenants[x.tenant]
	budget := feedbackEdgeBase + feedbackEdgesPerAtom*1
	first := fresh(1)
	x.feedback(1, []ID{id}, first...)
	if n := x.f.Stats(x.tenant).HebbianEdges; n >= budget {
		t.Fatalf("the first call left %d edges, the test needs fewer than the budget %d", n, budget)
	}
	for call := 2; call <= 4; call++ {
		x.feedback(1, []ID{id}, fresh(call)...)
		if n := x.f.Stats(x.tenant).HebbianEdges; n != budget {
			t.Fatalf("after call %d: %d edges, want the budget %d", call, n, budget)
		}
	}
	if names := len(tn.edges.concepts.names); names > 256*2+budget-maxFeedbackPairs {
		t.Fatalf("%d concepts interned: the calls past the budget interned theirs", names)
	}
	before := tn.edges.get("a0", "q1-0").Weight
	r := x.feedback(1, []ID{id}, first...)
	if r.CoactivationEdges != maxFeedbackPairs || x.f.Stats(x.tenant).HebbianEdges != budget {
		t.Fatalf("existing pairs again: %d touched, %d edges; want %d and %d",
			r.CoactivationEdges, x.f.Stats(x.tenant).HebbianEdges, maxFeedbackPairs, budget)
	}
	if w := tn.edges.get("a0", "q1-0").Weight; w <= before {
		t.Fatalf("weight %v after a step from %v: existing rows are still learned", w, before)
	}
}
