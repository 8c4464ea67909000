package raftfsm

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// applyFeedbackRef is applyFeedback as it was before pairSteps: each atom
// checked every pair of the union of its concepts and the call's against
// the pairs stepped so far. The reference the faster version must equal.
func (f *FSM) applyFeedbackRef(c *FeedbackCmd) *FeedbackResult {
	t := f.tenants[c.Tenant]
	res := &FeedbackResult{}
	if t == nil {
		return res
	}
	outcome := clamp(c.Outcome, -1, 1)
	touched := make(map[*edgeRec]bool)
	stepped := make(map[[2]string]bool)
	with := c.QueryConcepts
	if len(with) == 0 {
		with = c.Concepts
	}
	sum := 0.0
	seen := make(map[ID]bool, len(c.IDs))
	for _, id := range c.IDs {
		a := t.atoms[id]
		if a == nil || a.Type == Secret || seen[id] {
			continue
		}
		seen[id] = true
		t.setValence(a, clamp(a.Valence+float64(valenceRate*(outcome-a.Valence)), -1, 1))
		res.Updated++
		sum += a.Valence
		if len(stepped) < maxFeedbackPairs {
			stepPairsRef(t, union(a.Concepts, c.Concepts), with, outcome, c.At, stepped, touched)
		}
	}
	if res.Updated > 0 {
		res.AvgValence = sum / float64(res.Updated)
	}
	res.CoactivationEdges = len(touched)
	return res
}

func stepPairsRef(t *tenant, concepts, with []string, outcome float64, at int64, stepped map[[2]string]bool, touched map[*edgeRec]bool) {
	eta := feedbackEta * abs(outcome)
	for _, ac := range concepts {
		for _, qc := range with {
			pair := [2]string{min(ac, qc), max(ac, qc)}
			if stepped[pair] {
				continue
			}
			if len(stepped) == maxFeedbackPairs {
				return
			}
			stepped[pair] = true
			touch := t.edges.touch
			if t.edges.count >= feedbackEdgeBudget(t) { // the budget, as applyFeedback keeps it
				touch = t.edges.touchExisting
			}
			if e := touch(ac, qc, eta, outcome, true, at); e != nil {
				touched[e] = true
			}
		}
	}
}

// names returns n concept names: prefix0, prefix1, ...
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(prefix, i)
	}
	return out
}

// feedbackFixture is a tenant for feedback: fullS atoms carrying the 256
// concepts s0..s255, 60 atoms of random concepts (some repeated, some of
// S, some of the query names q*), a chain of revisions and three secrets.
// It returns the state and the IDs by kind.
func feedbackFixture(t *testing.T, fullS int) (*FSM, map[string][]ID) {
	f := New(testDim)
	rng := rand.New(rand.NewSource(7))
	vocab := append(append(names("s", 256), names("q", 300)...), names("v", 400)...)
	ids := map[string][]ID{}
	n := 0
	write := func(kind string, it WriteItem) {
		n++
		it.ID, it.CreatedAt, it.Content = mkID(n), baseTime+int64(n)*1000, fmt.Sprint("atom ", n)
		if it.Domain == "" {
			it.Domain = []string{"a", "b"}[n%2]
		}
		if it.Type != Secret {
			it.Vector = randomUnit(rng, testDim)
		}
		r := f.Apply(uint64(n), (&WriteCmd{Tenant: "org", Items: []WriteItem{it}}).Encode()).(*WriteResults)
		if r.Err != nil || !r.Results[0].Stored {
			t.Fatalf("write %d: %+v %+v", n, r.Err, r.Results)
		}
		ids[kind] = append(ids[kind], it.ID)
	}
	for range fullS {
		write("full", WriteItem{Concepts: names("s", 256)})
	}
	for range 60 {
		var cs []string
		for range rng.Intn(257) {
			cs = append(cs, vocab[rng.Intn(len(vocab))])
		}
		write("random", WriteItem{Concepts: cs})
	}
	for i := range 4 {
		it := WriteItem{Concepts: names("s", 40+i)}
		if i > 0 {
			it.Supersedes = []ID{ids["chain"][i-1]}
		}
		write("chain", it)
	}
	for i := range 3 {
		write("secret", WriteItem{Type: Secret, ExternalRef: fmt.Sprint("secret:k", i),
			Sealed: []byte("sealed"), Concepts: names("s", 10)})
	}
	return f, ids
}

// TestFeedbackStepsAsReference applies feedback calls to two equal states,
// through applyFeedback and through the reference (applyFeedbackRef), and
// requires the same results, the same snapshot and the same edges in the
// same creation order: the calls cover the pair bound met in the middle of
// an atom and exactly at an atom's end, pairs named on both sides,
// concepts without query_concepts, repeated names and IDs, secrets,
// unknown IDs and superseded atoms.
func TestFeedbackStepsAsReference(t *testing.T) {
	fast, ids := feedbackFixture(t, 12)
	ref, _ := feedbackFixture(t, 12)
	sameState(t, "fixtures", fast, ref)
	rng := rand.New(rand.NewSource(11))
	S := names("s", 256)
	pick := func(list []string, k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = list[rng.Intn(len(list))]
		}
		return out
	}
	vocab := append(append(names("s", 256), names("q", 300)...), names("v", 400)...)
	mixed := func(k int) []ID {
		all := append(append(append([]ID{}, ids["full"]...), ids["random"]...), ids["chain"]...)
		out := pick2(rng, all, k)
		out = append(out, ids["secret"][rng.Intn(3)], mkID(999_999), out[0]) // skipped, unknown, repeated
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	type call struct {
		name string
		cmd  FeedbackCmd
	}
	calls := []call{
		{"auditor's shape: S against 255 others", FeedbackCmd{IDs: ids["full"], Outcome: 1,
			Concepts: S, QueryConcepts: names("q", 255)}},
		{"again, edges now exist", FeedbackCmd{IDs: ids["full"], Outcome: -0.7,
			Concepts: S, QueryConcepts: names("q", 255)}},
		{"query overlapping S: pairs named on both sides", FeedbackCmd{IDs: ids["full"], Outcome: 0.5,
			Concepts: S[:200], QueryConcepts: append(names("q", 55), S[100:300-100]...)}},
		{"bound met inside an atom", FeedbackCmd{IDs: mixed(30), Outcome: 0.9,
			Concepts: pick(vocab, 120), QueryConcepts: pick(vocab, 256)}},
		{"bound met exactly at an atom's end", FeedbackCmd{IDs: append(ids["full"][:1], ids["random"]...),
			Outcome: 1, QueryConcepts: names("q", 256)}},
		{"concepts alone", FeedbackCmd{IDs: mixed(20), Outcome: -1, Concepts: pick(vocab, 200)}},
		{"query alone", FeedbackCmd{IDs: mixed(25), Outcome: 0.3, QueryConcepts: pick(vocab, 150)}},
		{"repeated names", FeedbackCmd{IDs: mixed(40), Outcome: 0.8,
			Concepts: append(pick(S, 50), pick(S, 50)...), QueryConcepts: append(pick(vocab, 60), pick(S, 60)...)}},
		{"outcome 0", FeedbackCmd{IDs: mixed(10), Outcome: 0, Concepts: pick(S, 30), QueryConcepts: pick(vocab, 30)}},
		{"clamped outcome", FeedbackCmd{IDs: mixed(10), Outcome: 1.7, Concepts: pick(S, 30), QueryConcepts: pick(vocab, 30)}},
		{"nothing to reinforce", FeedbackCmd{IDs: mixed(10), Outcome: 1}},
		{"only unknown IDs", FeedbackCmd{IDs: []ID{mkID(999_998)}, Outcome: 1, Concepts: S}},
		{"unknown tenant", FeedbackCmd{Tenant: "nobody", IDs: ids["full"], Outcome: 1, Concepts: S}},
	}
	for i := range 24 {
		calls = append(calls, call{fmt.Sprint("random ", i), FeedbackCmd{IDs: mixed(1 + rng.Intn(60)),
			Outcome: rng.Float64()*2.4 - 1.2, Concepts: pick(vocab, rng.Intn(80)), QueryConcepts: pick(vocab, rng.Intn(120))}})
	}
	for i, c := range calls {
		c.cmd.At = baseTime + int64(1_000_000+i)
		if c.cmd.Tenant == "" {
			c.cmd.Tenant = "org"
		}
		b := c.cmd.Encode()
		got := fast.Apply(uint64(1000+i), b).(*FeedbackResult)
		cmd := decodeCommand(b).(*FeedbackCmd)
		want := applyRef(ref, func() *FeedbackResult { return ref.applyFeedbackRef(cmd) })
		if got.Updated != want.Updated || got.CoactivationEdges != want.CoactivationEdges ||
			math.Float64bits(got.AvgValence) != math.Float64bits(want.AvgValence) {
			t.Fatalf("%s: result %+v, want %+v", c.name, got, want)
		}
		if i < len(calls)-24 || i == len(calls)-1 {
			sameState(t, c.name, fast, ref)
		}
	}
}

// pick2 returns k of list, repeats allowed, in random order.
func pick2(rng *rand.Rand, list []ID, k int) []ID {
	out := make([]ID, k)
	for i := range out {
		out[i] = list[rng.Intn(len(list))]
	}
	return out
}
