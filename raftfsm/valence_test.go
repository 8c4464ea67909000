package raftfsm

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"
)

// A tenant's quantised searches bound relevance weights by those of the
// valences its atoms have had: 1 until some feedback. Feedback and restore
// must widen the bounds, or searches would miss rows whose weight exceeds
// them; a bound tighter than the valences allow would do the same.
func TestValenceBoundsFollowFeedbackAndRestore(t *testing.T) {
	const dim = 32
	withCodedRows(t, 16)
	rng := rand.New(rand.NewSource(9))
	f := New(dim)
	var ids []ID
	cmd := &WriteCmd{Tenant: "org", Batch: true}
	for i := range 400 {
		ids = append(ids, mkID(i+1))
		cmd.Items = append(cmd.Items, WriteItem{ID: mkID(i + 1), CreatedAt: baseTime + int64(i),
			Content: "atom", Domain: "d", Vector: randomUnit(rng, dim)})
	}
	f.Apply(1, cmd.Encode())
	if tn := f.tenants["org"]; tn.valMin != 0 || tn.valMax != 0 {
		t.Fatalf("valence bounds [%v, %v] before any feedback", tn.valMin, tn.valMax)
	}
	check := func(name string, st *FSM) {
		t.Helper()
		tn := st.tenants["org"]
		want := map[*domainIndex][]int32{}
		for _, a := range tn.atoms {
			if a.Valence < tn.valMin || a.Valence > tn.valMax {
				t.Fatalf("%s: valence %v outside the bounds [%v, %v]", name, a.Valence, tn.valMin, tn.valMax)
			}
			if d := tn.domains[a.Domain]; a.Valence > 0 {
				want[d] = append(want[d], a.slot)
			}
		}
		if len(want) == 0 {
			t.Fatalf("%s: no atom of positive valence", name)
		}
		for _, d := range tn.domains {
			slices.Sort(want[d])
			if !slices.Equal(d.heavy, want[d]) {
				t.Fatalf("%s: domain %s lists heavy rows %v, want %v", name, d.name, d.heavy, want[d])
			}
		}
		for i := range 30 {
			req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 1 + i%10, MinRelevance: -1}
			if d := codedVsExact(st, req); d != "" {
				t.Fatalf("%s, request %d: %s", name, i, d)
			}
		}
	}
	// Positive feedback once on a quarter of the atoms (their weights reach
	// 1 + α·0.3 > 1, which a bound of 1 would cut off), then again on a few
	// (higher still), and negative on some.
	index := uint64(1)
	apply := func(i int, outcome float64) {
		index++
		f.Apply(index, (&FeedbackCmd{Tenant: "org", IDs: []ID{ids[i]}, Outcome: outcome, At: baseTime}).Encode())
	}
	for i := 0; i < len(ids); i += 4 {
		apply(i, 1)
	}
	if tn := f.tenants["org"]; !(tn.valMax > 0.29 && tn.valMax < 0.31) || tn.valMin != 0 {
		t.Fatalf("one feedback of 1: bounds [%v, %v], want [0, 0.3]", tn.valMin, tn.valMax)
	}
	check("after one feedback", f)
	for i := 0; i < len(ids); i += 40 {
		apply(i, 1)
	}
	for i := 1; i < len(ids); i += 8 {
		apply(i, -1)
	}
	for i := 4; i < len(ids); i += 40 {
		apply(i, -1) // 0.3 becomes -0.09: no longer boosted
	}
	apply(len(ids)-1, 1) // the last row, which the delete moves into a boosted row's slot
	boosted := ids[8]    // deleted: its row must leave the heavy rows too
	index++
	f.Apply(index, (&DeleteAtomCmd{Tenant: "org", ID: boosted}).Encode())
	if f.tenants["org"].atoms[boosted] != nil {
		t.Fatal("delete left the atom")
	}
	if tn := f.tenants["org"]; !(tn.valMax > 0.5 && tn.valMin < -0.29) {
		t.Fatalf("more feedback: bounds [%v, %v], want about [-0.3, 0.51]", tn.valMin, tn.valMax)
	}
	check("after more feedback", f)
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := snap(&buf); err != nil {
		t.Fatal(err)
	}
	g := New(dim)
	if err := g.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	if a, b := f.tenants["org"], g.tenants["org"]; a.valMin != b.valMin || a.valMax != b.valMax {
		t.Fatalf("restore: bounds [%v, %v], before [%v, %v]", b.valMin, b.valMax, a.valMin, a.valMax)
	}
	check("restored", g)
}
