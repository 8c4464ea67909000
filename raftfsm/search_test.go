package raftfsm

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// semanticFixture stores four atoms of decreasing similarity to axis 0.
func semanticFixture(t *testing.T) (*fixture, [4]ID) {
	x := newFixture(t)
	var ids [4]ID
	ids[0] = x.put("exact", "d", oneHot(0))
	ids[1] = x.put("close", "d", mix(0, 1, 0.8))
	ids[2] = x.put("half", "d", mix(0, 2, 0.5))
	ids[3] = x.put("orthogonal", "d", oneHot(3))
	return x, ids
}

func TestReadSemantic(t *testing.T) {
	x, ids := semanticFixture(t)
	tests := []struct {
		name string
		req  ReadRequest
		want []ID
	}{
		{"ranked by similarity, floor drops the orthogonal", ReadRequest{TopK: 10, MinRelevance: 0.3}, ids[:3]},
		{"top_k cuts", ReadRequest{TopK: 2, MinRelevance: 0.3}, ids[:2]},
		{"min_relevance drops", ReadRequest{TopK: 10, MinRelevance: 0.6}, ids[:2]},
		{"zero floor keeps the orthogonal", ReadRequest{TopK: 10, MinRelevance: 0}, ids[:4]},
		{"domain scope", ReadRequest{TopK: 10, Domains: []string{"elsewhere"}}, []ID{}},
		{"empty domain list scopes to nothing", ReadRequest{TopK: 10, Domains: []string{}}, []ID{}},
		{"top_k zero", ReadRequest{TopK: 0}, []ID{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Vector = oneHot(0)
			res := x.read(tc.req)
			assertIDs(t, "items", itemIDs(res.Items), tc.want)
			for _, it := range res.Items {
				if it.Source != SourceSemantic || it.Relevance != it.Similarity {
					t.Fatalf("item %s: source %s relevance %v similarity %v", it.Atom.Content,
						it.Source, it.Relevance, it.Similarity)
				}
			}
			if res.EpisodicHit || res.Roundtrips != 1 {
				t.Fatalf("episodic_hit %v roundtrips %d", res.EpisodicHit, res.Roundtrips)
			}
		})
	}
	if it, _ := findItem(x.read(ReadRequest{Vector: oneHot(0), TopK: 3}).Items, ids[1]); !near(it.Similarity, 0.8) {
		t.Fatalf("similarity of the close atom %v, want 0.8", it.Similarity)
	}
}

func TestReadIsTenantScoped(t *testing.T) {
	x, _ := semanticFixture(t)
	for _, req := range []ReadRequest{
		{Tenant: "stranger", Vector: oneHot(0), TopK: 10},
		{Tenant: "org", Vector: []float32{1, 0}, TopK: 10}, // wrong dimension
	} {
		res := x.f.Read(&req)
		if len(res.Items) != 0 || res.Items == nil || res.Expanded == nil {
			t.Fatalf("read %+v: %+v, want empty non-nil slices", req, res)
		}
	}
}

func TestReadValenceModulation(t *testing.T) {
	x, ids := semanticFixture(t)
	for range 3 {
		x.feedback(1, []ID{ids[2]})
	}
	for range 2 {
		x.feedback(-1, []ID{ids[1]})
	}
	res := x.read(ReadRequest{Vector: oneHot(0), TopK: 10, MinRelevance: 0.3})
	for _, id := range ids[:3] {
		it, ok := findItem(res.Items, id)
		if !ok {
			t.Fatalf("%s missing", id)
		}
		v := x.get(id).Valence
		if want := it.Similarity * (1 + Alpha*v); !near(it.Relevance, want) || it.Atom.Valence != v {
			t.Fatalf("%s: relevance %v, want similarity·(1+α·v) = %v (v %v)", it.Atom.Content, it.Relevance, want, v)
		}
	}
	for i := 1; i < len(res.Items); i++ {
		if res.Items[i-1].Relevance < res.Items[i].Relevance {
			t.Fatalf("items not ordered by relevance: %v", res.Items)
		}
	}
}

func TestReadReinforcedTwinOutranks(t *testing.T) {
	x := newFixture(t)
	first := x.put("twin", "x", oneHot(0))
	second := x.put("twin", "y", oneHot(0))
	req := ReadRequest{Vector: oneHot(0), TopK: 1}
	assertIDs(t, "before feedback", itemIDs(x.read(req).Items), []ID{first}) // tie: lower ID
	x.feedback(0.5, []ID{second})
	assertIDs(t, "after feedback", itemIDs(x.read(req).Items), []ID{second})
	x.feedback(-0.5, []ID{first})
	req.TopK = 2
	res := x.read(req)
	assertIDs(t, "both", itemIDs(res.Items), []ID{second, first})
	if !(res.Items[0].Relevance > 1 && res.Items[1].Relevance < 1) {
		t.Fatalf("relevances %v %v", res.Items[0].Relevance, res.Items[1].Relevance)
	}
}

func TestReadFingerprint(t *testing.T) {
	x, ids := semanticFixture(t)
	it := x.item("the episode", "d", oneHot(4))
	it.Fingerprint = "fp-1"
	ep := x.store(it)

	res := x.read(ReadRequest{Vector: oneHot(0), TopK: 2, Fingerprint: "fp-1"})
	assertIDs(t, "items", itemIDs(res.Items), []ID{ep, ids[0]})
	if !res.EpisodicHit || res.Items[0].Source != SourceEpisodic || res.Items[0].Relevance != 1 {
		t.Fatalf("pinned item %+v, hit %v", res.Items[0], res.EpisodicHit)
	}
	res = x.read(ReadRequest{Vector: oneHot(0), TopK: 2, Fingerprint: "fp-unknown"})
	if res.EpisodicHit {
		t.Fatal("episodic hit for an unknown fingerprint")
	}
	assertIDs(t, "no match", itemIDs(res.Items), ids[:2])
	res = x.read(ReadRequest{Vector: oneHot(0), TopK: 2, Fingerprint: "fp-1", Domains: []string{"other"}})
	if res.EpisodicHit || len(res.Items) != 0 {
		t.Fatalf("fingerprint matched outside the read's domain: %+v", res.Items)
	}
}

func TestReadFingerprintPullsLiveTip(t *testing.T) {
	setup := func(t *testing.T, links int) (*fixture, ID, ID) {
		x := newFixture(t)
		it := x.item("rev 0", "old", oneHot(5))
		it.Fingerprint = "fp"
		match := x.store(it)
		prev := match
		for i := 1; i <= links; i++ {
			prev = x.supersede(fmt.Sprint("rev ", i), "new", oneHot(6), prev)
		}
		return x, match, prev
	}
	req := func(hide bool) ReadRequest {
		return ReadRequest{Vector: oneHot(0), TopK: 5, MinRelevance: 0.3, Fingerprint: "fp",
			Domains: []string{"old"}, HideReplaced: hide}
	}
	t.Run("filtering on pulls the tip across domains", func(t *testing.T) {
		x, match, tip := setup(t, 3)
		res := x.read(req(true))
		assertIDs(t, "items", itemIDs(res.Items), []ID{match, tip})
		if res.Items[1].Source != SourceEpisodic || !res.EpisodicHit {
			t.Fatalf("tip %+v", res.Items[1])
		}
		assertIDs(t, "touch skips the replaced match", res.Touch, []ID{tip})
	})
	t.Run("filtering off returns only the match", func(t *testing.T) {
		x, match, _ := setup(t, 3)
		assertIDs(t, "items", itemIDs(x.read(req(false)).Items), []ID{match})
	})
	t.Run("broken chain returns only the match", func(t *testing.T) {
		x, match, tip := setup(t, 3)
		x.deleteAtom(tip)
		assertIDs(t, "items", itemIDs(x.read(req(true)).Items), []ID{match})
	})
	t.Run("32 links deep is reached", func(t *testing.T) {
		x, match, tip := setup(t, 32)
		assertIDs(t, "items", itemIDs(x.read(req(true)).Items), []ID{match, tip})
	})
	t.Run("33 links deep is too deep", func(t *testing.T) {
		x, match, _ := setup(t, 33)
		assertIDs(t, "items", itemIDs(x.read(req(true)).Items), []ID{match})
	})
}

func TestReadHistory(t *testing.T) {
	x := newFixture(t)
	old := x.put("old", "d", oneHot(0))
	cur := x.supersede("current", "d", mix(0, 1, 0.9), old)
	moved := x.put("moved away", "d", mix(0, 2, 0.95))
	elsewhere := x.supersede("moved", "e", mix(0, 2, 0.94), moved)
	tests := []struct {
		name            string
		hide, history   bool
		domains         []string
		want, wantTouch []ID
	}{
		{"filtering off shows history", false, false, nil, []ID{old, moved, elsewhere, cur}, []ID{old, moved, elsewhere, cur}},
		{"filtering on hides it", true, false, nil, []ID{elsewhere, cur}, []ID{elsewhere, cur}},
		{"include_history shows it, untouched", true, true, nil, []ID{old, moved, elsewhere, cur}, []ID{elsewhere, cur}},
		{"history keeps its own domain", true, true, []string{"e"}, []ID{elsewhere}, []ID{elsewhere}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := x.read(ReadRequest{Vector: oneHot(0), TopK: 10, MinRelevance: 0.3,
				HideReplaced: tc.hide, IncludeHistory: tc.history, Domains: tc.domains})
			assertIDs(t, "items", itemIDs(res.Items), tc.want)
			assertIDs(t, "touch", res.Touch, tc.wantTouch)
		})
	}
}

func TestReadConceptScoped(t *testing.T) {
	x, ids := semanticFixture(t)
	kiwi := x.put("kiwi fact", "d", oneHot(6), "kiwi", "fruit")
	tests := []struct {
		name     string
		concepts []string
		rel      float64
	}{
		{"all query concepts", []string{"kiwi"}, conceptFloor + conceptSpan},
		{"half the query concepts", []string{"kiwi", "banana"}, conceptFloor + conceptSpan/2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := x.read(ReadRequest{Vector: oneHot(0), TopK: 10, MinRelevance: 0.3, Concepts: tc.concepts})
			it, ok := findItem(res.Items, kiwi)
			if !ok {
				t.Fatalf("atom with cosine 0 and a query concept missing: %v", itemIDs(res.Items))
			}
			if it.Source != SourceConcept || !near(it.Relevance, tc.rel) || it.Similarity != 0 {
				t.Fatalf("item %+v, want concept_scoped with relevance %v", it, tc.rel)
			}
			assertIDs(t, "order", itemIDs(res.Items), []ID{ids[0], ids[1], kiwi, ids[2]})
		})
	}
	t.Run("similarity above the concept score stays semantic", func(t *testing.T) {
		y := newFixture(t)
		id := y.put("exact kiwi", "d", oneHot(0), "kiwi")
		res := y.read(ReadRequest{Vector: oneHot(0), TopK: 10, Concepts: []string{"kiwi"}})
		if len(res.Items) != 1 || res.Items[0].Atom.ID != id || res.Items[0].Source != SourceSemantic ||
			res.Items[0].Relevance != 1 {
			t.Fatalf("items %+v", res.Items)
		}
	})
	t.Run("concept score beats a weak similarity", func(t *testing.T) {
		y := newFixture(t)
		id := y.put("weak kiwi", "d", mix(0, 1, 0.5), "kiwi")
		res := y.read(ReadRequest{Vector: oneHot(0), TopK: 10, Concepts: []string{"kiwi"}})
		if len(res.Items) != 1 || res.Items[0].Atom.ID != id || res.Items[0].Source != SourceConcept ||
			!near(res.Items[0].Relevance, conceptFloor+conceptSpan) || !near(res.Items[0].Similarity, 0.5) {
			t.Fatalf("items %+v", res.Items)
		}
	})
	t.Run("out of scope", func(t *testing.T) {
		res := x.read(ReadRequest{Vector: oneHot(0), TopK: 10, Concepts: []string{"kiwi"}, Domains: []string{"z"}})
		if len(res.Items) != 0 {
			t.Fatalf("items %v", itemIDs(res.Items))
		}
	})
}

func TestReadHebbianAssociations(t *testing.T) {
	x := newFixture(t)
	var fillers []ID
	for i := 1; i <= 5; i++ {
		fillers = append(fillers, x.put(fmt.Sprint("filler ", i), "d", mix(0, i, 0.99-float64(i)/100)))
	}
	// Each at similarity 0.5 to the query (DESIGN.md: an association
	// scores similarity × edge weight), below every filler.
	var assoc []ID
	for i := range 4 {
		v := make([]float32, testDim)
		th := float64(i) * math.Pi / 4
		v[0], v[6], v[7] = 0.5, float32(math.Sqrt(0.75)*math.Cos(th)), float32(math.Sqrt(0.75)*math.Sin(th))
		assoc = append(assoc, x.put(fmt.Sprint("associated ", i), "d", v, "pasta"))
	}
	req := ReadRequest{Vector: oneHot(0), TopK: 5, MinRelevance: 0.05, Concepts: []string{"dinner"},
		IncludeAssociations: true}
	if res := x.read(req); len(res.Items) != 5 || len(res.Expanded) != 0 {
		t.Fatalf("before feedback: %d items, expanded %v", len(res.Items), res.Expanded)
	}
	fb := x.feedback(1, assoc[:1], "dinner")
	if fb.Updated != 1 || fb.CoactivationEdges != 1 {
		t.Fatalf("feedback %+v", fb)
	}
	res := x.read(req)
	if len(res.Expanded) != 1 || res.Expanded[0] != "pasta" {
		t.Fatalf("expanded %v", res.Expanded)
	}
	assertIDs(t, "ranked part", itemIDs(res.Items[:5]), fillers)
	hebb := res.Items[5:]
	if len(hebb) != 2 { // ceil(5/4) reserved slots
		t.Fatalf("%d association items, want 2", len(hebb))
	}
	for _, it := range hebb {
		if it.Source != SourceHebbian {
			t.Fatalf("item %s source %s", it.Atom.Content, it.Source)
		}
	}
	if hebb[0].Atom.ID != assoc[0] { // reinforced, so the best of them
		t.Fatalf("first association %s, want %s", hebb[0].Atom.Content, "associated 0")
	}
	w := res.Items[5].Relevance / (1 + Alpha*x.get(assoc[0]).Valence) / 0.5 // the edge's weight
	if w < 0.1 || w > 1 || !near(hebb[1].Relevance, 0.5*w) {
		t.Fatalf("association relevances %v, %v: want similarity × weight (0.5 × %v), then × valence", hebb[0].Relevance, hebb[1].Relevance, w)
	}
	// An associated atom the query is not similar to scores nothing.
	y := newFixture(t)
	y.put("filler", "d", mix(0, 1, 0.99))
	far := y.put("unrelated", "d", mix(6, 7, 0.3), "pasta")
	y.feedback(1, []ID{far}, "dinner")
	if res := y.read(ReadRequest{Vector: oneHot(0), TopK: 1, MinRelevance: 0.05, Concepts: []string{"dinner"},
		IncludeAssociations: true}); len(res.Items) != 1 {
		t.Fatalf("an association of similarity 0 retrieved: %d items", len(res.Items))
	}
	req.IncludeAssociations = false
	if res := x.read(req); len(res.Items) != 5 {
		t.Fatalf("associations without include_associations: %d items", len(res.Items))
	}
	req.IncludeAssociations, req.TopK = true, 1
	if res := x.read(req); len(res.Items) != 2 {
		t.Fatalf("top_k 1: %d items, want 1 + 1 reserved slot", len(res.Items))
	}
}

func TestReadDiversity(t *testing.T) {
	x := newFixture(t)
	best := x.put("best", "d", unit(0.9, 0.436))
	twin := x.put("near twin", "d", unit(0.89, 0.44, 0, 0, 0, 0, 0, 0.05))
	other := x.put("different", "d", unit(0.8, 0, 0.6))
	tests := []struct {
		name      string
		diversity float64
		topK      int
		want      []ID
	}{
		{"off: plain cut", 0, 2, []ID{best, twin}},
		{"on: the twin gives way", 0.5, 2, []ID{best, other}},
		{"on, nothing to cut", 0.5, 3, []ID{best, twin, other}},
		{"top_k at the pool size: plain cut", 0.5, mmrPool, []ID{best, twin, other}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := x.read(ReadRequest{Vector: oneHot(0), TopK: tc.topK, MinRelevance: 0.3, Diversity: tc.diversity})
			assertIDs(t, "items", itemIDs(res.Items), tc.want)
			if res.Items[0].Relevance != res.Items[0].Similarity {
				t.Fatal("diversity changed a relevance")
			}
		})
	}
}

// The slots reserved for associations stay seated under diversity (§4.4
// rule 7): by a candidate diversity left out only when no other is left
// (in a small tenant every candidate is in the diversity pool, and the
// slots stayed empty); otherwise by one it did not.
func TestReadDiversityAssociationSlots(t *testing.T) {
	x := newFixture(t)
	best := x.put("best", "d", unit(0.9, 0.436))
	twin := x.put("near twin", "d", unit(0.89, 0.44, 0, 0, 0, 0, 0, 0.05), "cache")
	other := x.put("different", "d", unit(0.8, 0, 0.6))
	x.f.tenants[x.tenant].edges.touch("query", "cache", 0.5, 0, false, 1)
	req := ReadRequest{Vector: oneHot(0), TopK: 2, MinRelevance: 0, IncludeAssociations: true, Concepts: []string{"query"}}
	if res := x.read(req); !slices.Contains(itemIDs(res.Items), twin) {
		t.Fatalf("without diversity the twin is not found at all: %v", itemIDs(res.Items))
	}
	req.Diversity = 0.5
	assertIDs(t, "small tenant", itemIDs(x.read(req).Items), []ID{best, other, twin})

	// 210 rows between the twin and far: far is outside the 200-row pool,
	// an association diversity did not leave out; it takes the slot.
	for i := range 210 {
		x.put(fmt.Sprintf("filler %d", i), "d", mix(0, 1+i%7, 0.6+0.0004*float64(i)))
	}
	far := x.put("far", "d", mix(0, 3, 0.3), "cache")
	got := itemIDs(x.read(req).Items)
	if len(got) != 3 || got[0] != best || !slices.Contains(got, far) || slices.Contains(got, twin) {
		t.Fatalf("large tenant: items %v, want best first, far in the association slot, the twin out", got)
	}
}

func TestReadFilter(t *testing.T) {
	x := newFixture(t)
	meta := map[string]string{
		"go":    `{"lang":"go","tags":["db","raft"],"owner":{"team":"core"},"stars":3}`,
		"rust":  `{"lang":"rust","tags":["db"],"owner":{"team":"edge"},"stars":5}`,
		"plain": ``,
	}
	ids := map[string]ID{}
	for i, name := range []string{"go", "rust", "plain"} {
		it := x.item(name, "d", mix(0, i+1, 0.9-0.1*float64(i)))
		if meta[name] != "" {
			it.Metadata = []byte(meta[name])
		}
		ids[name] = x.store(it)
	}
	tests := []struct {
		name  string
		conds []Condition
		want  []string
	}{
		{"none", nil, []string{"go", "rust", "plain"}},
		{"eq string", []Condition{{"lang", "eq", []byte(`"rust"`)}}, []string{"rust"}},
		{"eq number", []Condition{{"stars", "eq", []byte(`3.0`)}}, []string{"go"}},
		{"dotted eq", []Condition{{"owner.team", "eq", []byte(`"core"`)}}, []string{"go"}},
		{"contains substring", []Condition{{"lang", "contains", []byte(`"us"`)}}, []string{"rust"}},
		{"contains element", []Condition{{"tags", "contains", []byte(`"db"`)}}, []string{"go", "rust"}},
		{"in", []Condition{{"owner.team", "in", []byte(`["edge","x"]`)}}, []string{"rust"}},
		{"all must hold", []Condition{{"tags", "contains", []byte(`"db"`)}, {"stars", "in", []byte(`[5]`)}}, []string{"rust"}},
		{"missing field", []Condition{{"owner.name", "eq", []byte(`"x"`)}}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := x.read(ReadRequest{Vector: oneHot(0), TopK: 10, MinRelevance: 0.3, Filter: tc.conds})
			want := make([]ID, len(tc.want))
			for i, n := range tc.want {
				want[i] = ids[n]
			}
			assertIDs(t, "items", itemIDs(res.Items), want)
		})
	}
}

func TestReadAuthor(t *testing.T) {
	x := newFixture(t)
	authors := []*Provenance{
		{Principal: "alice", Agent: "claude", ClientEnv: "cli"},
		{Principal: "bob", Agent: "claude", ClientEnv: "ide", IsExternal: true},
		nil,
	}
	var ids []ID
	for i, p := range authors {
		it := x.item(fmt.Sprint("by ", i), "d", mix(0, i+1, 0.9-0.1*float64(i)))
		it.Provenance = p
		ids = append(ids, x.store(it))
	}
	tests := []struct {
		name string
		f    AuthorFilter
		want []ID
	}{
		{"no filter", AuthorFilter{}, ids},
		{"principal", AuthorFilter{Principal: ptr("bob")}, ids[1:2]},
		{"agent", AuthorFilter{Agent: ptr("claude")}, ids[:2]},
		{"client env", AuthorFilter{ClientEnv: ptr("cli")}, ids[:1]},
		{"external", AuthorFilter{IsExternal: ptr(true)}, ids[1:2]},
		{"owner members", AuthorFilter{IsExternal: ptr(false)}, ids[:1]},
		{"conjunction", AuthorFilter{Agent: ptr("claude"), ClientEnv: ptr("ide")}, ids[1:2]},
		{"nobody", AuthorFilter{Principal: ptr("carol")}, []ID{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := x.read(ReadRequest{Vector: oneHot(0), TopK: 10, MinRelevance: 0.3, Author: tc.f})
			assertIDs(t, "items", itemIDs(res.Items), tc.want)
		})
	}
}

func TestTouch(t *testing.T) {
	x := newFixture(t)
	a := x.put("a", "d", oneHot(0))
	b := x.put("b", "d", oneHot(1))
	_, at := x.next()
	x.apply(&TouchCmd{Tenant: x.tenant, IDs: []ID{a, a, b, mkID(4242)}, At: at})
	x.apply(&TouchCmd{Tenant: x.tenant, IDs: []ID{a}, At: at - 10}) // late batch: keeps the newest time
	x.apply(&TouchCmd{Tenant: "nobody", IDs: []ID{a}, At: at})
	if got := x.get(a); got.AccessCount != 3 || got.LastAccessedAt != at {
		t.Fatalf("a: count %d last %d, want 3 and %d", got.AccessCount, got.LastAccessedAt, at)
	}
	if got := x.get(b); got.AccessCount != 1 {
		t.Fatalf("b: count %d", got.AccessCount)
	}
}

func TestReadNaNSafe(t *testing.T) {
	x, _ := semanticFixture(t)
	q := oneHot(0)
	q[1] = float32(math.NaN())
	res := x.read(ReadRequest{Vector: q, TopK: 10})
	if len(res.Items) != 0 {
		t.Fatalf("NaN query returned %d items", len(res.Items))
	}
}

// TestReadTieIndependentOfRows: revisions with the same embedding tie
// exactly; which one a top_k cut keeps must not depend on where their rows
// sit in the arena (rows move on delete and on restore).
func TestReadTieIndependentOfRows(t *testing.T) {
	x := newFixture(t)
	gone := x.put("x", "d", oneHot(3))
	a := x.put("a", "d", oneHot(0))
	y := x.put("y", "d", oneHot(1))
	b := x.supersede("b", "d", oneHot(0), a) // same embedding, corrected text
	c := x.supersede("c", "d", oneHot(0), b)
	x.deleteAtom(gone) // c moves to row 0, ahead of a and b
	g := restored(t, snapshotBytes(t, x.f), testDim)
	for _, tc := range []struct {
		topK   int
		minRel float64
		want   []ID
	}{
		{1, 0.3, []ID{a}}, // the lowest ID wins the tie
		{2, 0.3, []ID{a, b}},
		{4, 0.3, []ID{a, b, c}},
		{4, -1, []ID{a, b, c, y}},
	} {
		req := ReadRequest{Tenant: x.tenant, Vector: oneHot(0), TopK: tc.topK, MinRelevance: tc.minRel}
		for name, f := range map[string]*FSM{"live": x.f, "restored": g} {
			assertIDs(t, fmt.Sprint(name, " top ", tc.topK), itemIDs(f.Read(&req).Items), tc.want)
		}
	}
	assertSameAsRestored(t, x.f)
}
