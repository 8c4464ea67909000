package raftfsm

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/hebbdb/hebb/vecmath"
)

// The pruned stages (conceptMatches scores only the atoms that can place,
// hebbian skips atoms whose bound cannot place) are compared here with a
// brute force that scores every atom, on small states where no read cap
// binds and where concepts, valences, ties and filters are frequent.

// refTenant builds a tenant of n atoms with a small concept vocabulary (so
// postings overlap and edges form) and varied valences.
func refTenant(t *testing.T, seed int64, n int) *FSM {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	f := New(8)
	domains := []string{"a", "b", "c"}
	for i := 0; i < n; i += 50 {
		cmd := &WriteCmd{Tenant: "org", Batch: true}
		for j := i; j < min(i+50, n); j++ {
			var concepts []string
			for range 1 + rng.Intn(4) {
				concepts = append(concepts, fmt.Sprint("k", rng.Intn(12)))
			}
			vec := randomUnit(rng, 8)
			cmd.Items = append(cmd.Items, WriteItem{ID: mkID(j + 1), CreatedAt: baseTime + int64(j),
				Content: fmt.Sprint("atom ", j), Domain: domains[rng.Intn(len(domains))],
				Concepts: dedupe(concepts), Vector: vec})
		}
		f.Apply(uint64(i+1), cmd.Encode())
	}
	for _, a := range f.tenants["org"].atoms {
		if rng.Intn(3) == 0 {
			// -1, -0.5, 0, 0.5, 1: ties of relevance; set as feedback would.
			f.tenants["org"].setValence(a, float64(rng.Intn(5)-2)/2)
		}
	}
	return f
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, c := range s {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// refRanked scores every visible atom of the scope: max(similarity, concept
// score) for atoms carrying query concepts, by relevance then ID.
func refRanked(s *search, n int) []candidate {
	var out []candidate
	for _, a := range s.t.atoms {
		if a.slot < 0 || s.seated[a] || !s.inScope(a) || !s.visible(a) {
			continue
		}
		sim, vec := s.simOf(a, mainStage)
		score, source := sim, SourceSemantic
		matched := 0
		for _, q := range s.req.Concepts {
			for _, c := range a.Concepts {
				if c == q {
					matched++
				}
			}
		}
		score = s.semScore(sim)
		if matched > 0 {
			if cs := conceptScore(matched, len(s.req.Concepts)); cs > score {
				score, source = cs, SourceConcept
			}
		}
		if c := s.score(a, vec, sim, score, source); c.rel >= s.req.MinRelevance {
			out = append(out, c)
		}
	}
	sortCandidates(out)
	return out[:min(n, len(out))]
}

// refHebbian scores every atom carrying an expanded concept.
func refHebbian(s *search, expanded []string, weight map[string]float64, slots int) []candidate {
	best := map[*Atom]candidate{}
	for _, c := range expanded {
		for _, a := range s.t.posting(c) {
			if s.seated[a] || !s.inScope(a) || !s.visible(a) {
				continue
			}
			vec := s.t.vector(a, s.f.dim)
			sim := float64(vecmath.Dot(s.req.Vector, vec))
			cand := s.score(a, vec, sim, s.semScore(sim)*weight[c], SourceHebbian)
			if prev, ok := best[a]; !ok || cand.rel > prev.rel {
				best[a] = cand
			}
		}
	}
	var out []candidate
	for _, c := range best {
		if c.rel >= s.req.MinRelevance {
			out = append(out, c)
		}
	}
	sortCandidates(out)
	return out[:min(slots, len(out))]
}

func sameCandidates(got, want []candidate) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d candidates, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].a != want[i].a || got[i].source != want[i].source || math.Abs(got[i].rel-want[i].rel) > 1e-12 {
			return fmt.Sprintf("#%d: %s %s %.9f, want %s %s %.9f", i, got[i].a.ID, got[i].source, got[i].rel,
				want[i].a.ID, want[i].source, want[i].rel)
		}
	}
	return ""
}

func TestPrunedStagesMatchBruteForce(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		f := refTenant(t, seed, 120+int(seed)*60)
		tn := f.tenants["org"]
		// Reinforce some edges so that expansion reaches past the weight floor.
		for i := range 40 {
			tn.edges.touch(fmt.Sprint("k", i%12), fmt.Sprint("k", (i*5+1)%12), 0.3, 0, false, 1)
		}
		rng := rand.New(rand.NewSource(seed * 77))
		var stored [][]float32
		for _, a := range tn.atoms {
			stored = append(stored, tn.vector(a, f.dim))
		}
		sort.Slice(stored, func(i, j int) bool { return stored[i][0] < stored[j][0] })
		for q := range 200 {
			vec := randomUnit(rng, 8)
			if rng.Intn(2) == 0 { // similarities near 1 make the hebbian bound bind
				vec = stored[rng.Intn(len(stored))]
			}
			req := &ReadRequest{Tenant: "org", Vector: vec, TopK: 1 + rng.Intn(12),
				MinRelevance: []float64{-1e9, 0, 0.3, 0.5}[rng.Intn(4)]}
			for range rng.Intn(4) {
				req.Concepts = append(req.Concepts, fmt.Sprint("k", rng.Intn(14)))
			}
			req.Concepts = dedupe(req.Concepts)
			if rng.Intn(3) == 0 {
				req.Domains = []string{"a", "c"}
			}
			name := fmt.Sprintf("seed %d query %d", seed, q)
			s := &search{f: f, t: tn, req: req, seated: map[*Atom]bool{}, gamma: []float64{0, 1, 0.6}[q%3]}
			if req.Domains != nil {
				s.scope = map[string]bool{"a": true, "c": true}
			}
			got := s.ranked(req.TopK)
			if d := sameCandidates(got, refRanked(s, req.TopK)); d != "" {
				t.Fatalf("%s ranked: %s", name, d)
			}
			expanded, weight := s.expand()
			slots := 1 + rng.Intn(4)
			// Read scores the associations beside the ranking, for slots
			// plus as many places as it may seat, then drops the seated.
			var wide []candidate
			if len(expanded) > 0 {
				wide = slices.Clone(s.hebbian(expanded, weight, slots+req.TopK))
			}
			for _, c := range got {
				s.seated[c.a] = true
			}
			if len(expanded) == 0 {
				continue
			}
			want := refHebbian(s, expanded, weight, slots)
			if d := sameCandidates(s.hebbian(expanded, weight, slots), want); d != "" {
				t.Fatalf("%s hebbian: %s", name, d)
			}
			var left []candidate
			for _, c := range wide {
				if len(left) < slots && !s.seated[c.a] {
					left = append(left, c)
				}
			}
			if d := sameCandidates(left, want); d != "" {
				t.Fatalf("%s hebbian beside the ranking: %s", name, d)
			}
		}
	}
}

// The comparison must see ties (equal concept scores and valences): a check
// that the fixture makes them.
func TestRefTenantHasTies(t *testing.T) {
	f := refTenant(t, 1, 300)
	s := &search{f: f, t: f.tenants["org"], req: &ReadRequest{Tenant: "org", Vector: unit(1, 1, 0, 0, 0, 0, 0, 0),
		Concepts: []string{"k1"}, MinRelevance: -1e9}, seated: map[*Atom]bool{}}
	all := refRanked(s, 1000)
	ties := 0
	for i := 1; i < len(all); i++ {
		if all[i].rel == all[i-1].rel {
			ties++
		}
	}
	if ties < 10 {
		t.Fatalf("%d ties of relevance among %d candidates", ties, len(all))
	}
}

func TestScoreFloor(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, slots := range []int{0, 1, 2, 5, 30} {
		f := newFloor(slots)
		var all []float64
		for i := range 200 {
			v := float64(rng.Intn(40)) / 8
			f.push(v)
			all = append(all, v)
			sorted := append([]float64(nil), all...)
			sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
			want := math.Inf(-1)
			if slots > 0 && len(sorted) >= slots {
				want = sorted[slots-1]
			}
			if got := f.min(); got != want {
				t.Fatalf("slots %d after %d pushes: min %v, want %v", slots, i+1, got, want)
			}
		}
		f.push(math.NaN())
		if m := f.min(); m != m {
			t.Fatalf("NaN became the floor")
		}
	}
}

func TestBestN(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for range 300 {
		m, n := rng.Intn(40), rng.Intn(12)
		s := make([]int, m)
		for i := range s {
			s[i] = rng.Intn(10)*100 + i // distinct, many equal hundreds
		}
		want := slices.Clone(s)
		slices.SortFunc(want, func(a, b int) int { return b - a })
		want = want[:min(n, m)]
		got := slices.Clone(bestN(slices.Clone(s), n, func(x, y int) bool { return x > y }))
		slices.SortFunc(got, func(a, b int) int { return b - a })
		if !slices.Equal(got, want) {
			t.Fatalf("bestN(%v, %d) = %v, want %v", s, n, got, want)
		}
	}
}

// A read's items are ordered by relevance (interface §2.5): the association
// stage's items, seated beyond top_k, go where their relevance places them,
// not after the ranking's hits.
func TestReadOrderedByRelevance(t *testing.T) {
	moved := 0
	for seed := int64(1); seed <= 4; seed++ {
		f := refTenant(t, seed, 300)
		tn := f.tenants["org"]
		for i := range 40 {
			tn.edges.touch(fmt.Sprint("k", i%12), fmt.Sprint("k", (i*5+1)%12), 0.3, 0, false, 1)
		}
		rng := rand.New(rand.NewSource(seed))
		for q := range 100 {
			req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, 8), TopK: 1 + rng.Intn(8),
				MinRelevance: 0, IncludeAssociations: true, Diversity: []float64{0, 0, 0.5}[q%3]}
			for range 1 + rng.Intn(3) {
				req.Concepts = append(req.Concepts, fmt.Sprint("k", rng.Intn(14)))
			}
			req.Concepts = dedupe(req.Concepts)
			items := f.Read(req).Items
			for i := 1; i < len(items); i++ {
				if items[i].Relevance > items[i-1].Relevance {
					t.Fatalf("seed %d query %d: item %d (%s, %.4f) after %s at %.4f", seed, q, i,
						items[i].Source, items[i].Relevance, items[i-1].Source, items[i-1].Relevance)
				}
				if items[i-1].Source == SourceHebbian && items[i].Source != SourceHebbian {
					moved++
				}
			}
		}
	}
	if moved == 0 {
		t.Fatal("no association placed ahead of a ranked hit: the check saw nothing to order")
	}
}
