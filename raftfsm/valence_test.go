package raftfsm

import (
	"bytes"
	"math/rand"
	"testing"
)

// A tenant's quantised searches bound relevance weights by 1 until some atom
// gets a valence; feedback and restore must raise the flag, or searches
// would miss rows whose weight exceeds the bound.
func TestValencedFlagFollowsFeedbackAndRestore(t *testing.T) {
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
	if f.tenants["org"].valenced {
		t.Fatal("valenced before any feedback")
	}
	// Strong positive feedback on a quarter of the atoms: their weights
	// reach 1 + α·v > 1, which a bound of 1 would cut off.
	for i := 0; i < len(ids); i += 4 {
		f.Apply(uint64(2+i), (&FeedbackCmd{Tenant: "org", IDs: []ID{ids[i]}, Outcome: 1, At: baseTime}).Encode())
	}
	if !f.tenants["org"].valenced {
		t.Fatal("feedback did not set valenced")
	}
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
	if !g.tenants["org"].valenced {
		t.Fatal("restore lost valenced")
	}
	for i := range 30 {
		req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 1 + i%10, MinRelevance: -1}
		for _, st := range []*FSM{f, g} {
			if d := codedVsExact(st, req); d != "" {
				t.Fatalf("request %d: %s", i, d)
			}
		}
	}
}
