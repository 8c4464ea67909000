package raftfsm

import (
	"errors"
	"testing"
)

func TestDeleteAtom(t *testing.T) {
	x := newFixture(t)
	p1 := x.put("p1", "d", oneHot(0), "alpha", "beta")
	p2 := x.put("p2", "d", oneHot(1))
	mid := x.supersede("mid", "d", oneHot(2), p1, p2)
	top := x.supersede("top", "e", oneHot(3), mid)
	lone := x.put("lone", "d", oneHot(4))
	secret := x.secret("k", "d")
	edges := x.f.Stats(x.tenant).HebbianEdges

	tests := []struct {
		name      string
		id        ID
		deleted   int
		hidden    []ID
		destroyed bool
		err       error
	}{
		{"middle of a chain leaves its predecessors hidden", mid, 1, []ID{p1, p2}, true, nil},
		{"second delete is a no-op", mid, 0, []ID{}, false, nil},
		{"head of a chain", top, 1, []ID{}, true, nil},
		{"atom outside any chain", lone, 1, []ID{}, false, nil},
		{"unknown atom", mkID(12345), 0, []ID{}, false, nil},
		{"secret is forbidden", secret, 0, []ID{}, false, ErrForbidden},
		{"root of a chain whose successor is gone", p2, 1, []ID{}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := x.deleteAtom(tc.id)
			if r.Deleted != tc.deleted || r.HistoryDestroyed != tc.destroyed {
				t.Fatalf("result %+v", r)
			}
			assertIDs(t, "left hidden", r.PredecessorsLeftHidden, tc.hidden)
			if tc.err != nil {
				assertApplyErr(t, r.Err, tc.err, tc.id)
				return
			}
			if r.Err != nil {
				t.Fatalf("error %v", r.Err)
			}
			if _, ok := x.f.Get(x.tenant, tc.id); ok {
				t.Fatal("still there")
			}
		})
	}
	if a := x.get(p1); a.SupersededBy != mid {
		t.Fatalf("p1 superseded_by %s, want the dangling %s", a.SupersededBy, mid)
	}
	if x.f.Stats(x.tenant).HebbianEdges != edges {
		t.Fatal("deleting atoms removed learned associations")
	}
	res := x.read(ReadRequest{Vector: oneHot(0), TopK: 10, MinRelevance: 0.3, HideReplaced: true})
	if len(res.Items) != 0 {
		t.Fatalf("hidden predecessor returned with filtering on: %v", itemIDs(res.Items))
	}
	if x.f.AtomCount(x.tenant) != 1 {
		t.Fatalf("atom count %d, want p1 only", x.f.AtomCount(x.tenant))
	}
	if r := (&fixture{t: t, f: x.f, tenant: "nobody"}).deleteAtom(p1); r.Deleted != 0 || r.Err != nil {
		t.Fatalf("delete in another tenant: %+v", r)
	}
}

func TestDeleteLeavesNoTrace(t *testing.T) {
	// A deleted atom must vanish from every index: search by vector, by
	// concept, by association and by fingerprint, the feed and the export.
	x := newFixture(t)
	keep := x.put("keep", "d", oneHot(1), "kiwi")
	it := x.item("victim", "d", oneHot(0))
	it.Concepts = []string{"kiwi", "kiwi", "pasta"} // a client may repeat a concept
	it.Fingerprint, it.ExternalRef = "fp", "ref"
	victim := x.store(it)
	x.feedback(1, []ID{victim}, "dinner")
	x.deleteAtom(victim)

	res := x.read(ReadRequest{Vector: oneHot(0), TopK: 10, MinRelevance: 0, Concepts: []string{"kiwi", "dinner"},
		Fingerprint: "fp", IncludeAssociations: true})
	assertIDs(t, "read", itemIDs(res.Items), []ID{keep})
	feed, _ := x.f.Recent(&RecentRequest{Tenant: x.tenant, Limit: 10})
	assertIDs(t, "recent", atomIDs(feed), []ID{keep})
	page, _ := x.f.ExportPage(x.tenant, nil, 10)
	assertIDs(t, "export", atomIDs(page), []ID{keep})
	if _, ok := x.f.GetByExternalRef(x.tenant, "ref"); ok {
		t.Fatal("external_ref still resolves")
	}
	if st := x.f.Stats(x.tenant); st.EpisodicFingerprints != 0 || st.TotalAtoms != 1 {
		t.Fatalf("stats %+v", st)
	}
	// The ref is free again.
	again := x.item("victim again", "d", oneHot(0))
	again.ExternalRef = "ref"
	if r := x.write(again); !r.Stored {
		t.Fatalf("rewrite under a freed ref: %s", r.Reason)
	}
	assertSameAsRestored(t, x.f)
}

func TestDeleteSwapsArenaRows(t *testing.T) {
	// Deleting from the middle moves the last row; searches must still see
	// the right vector for every atom.
	x := newFixture(t)
	var ids []ID
	for i := range testDim {
		ids = append(ids, x.put("axis", "d", oneHot(i)))
	}
	x.deleteAtom(ids[2])
	x.deleteAtom(ids[0])
	for i, id := range ids {
		res := x.read(ReadRequest{Vector: oneHot(i), TopK: 1, MinRelevance: 0.5})
		if i == 0 || i == 2 {
			if len(res.Items) != 0 {
				t.Fatalf("axis %d: deleted atom found", i)
			}
			continue
		}
		assertIDs(t, "nearest", itemIDs(res.Items), []ID{id})
	}
}

func TestDeleteDomain(t *testing.T) {
	x := newFixture(t)
	pa := x.put("pa", "keep", oneHot(0))
	pb := x.put("pb", "keep", oneHot(1))
	inner := x.put("inner", "wipe", oneHot(2))
	x.supersede("s1", "wipe", oneHot(3), pa, inner)
	x.supersede("s2", "wipe", oneHot(4), pb)
	x.put("other", "wipe", oneHot(5))
	x.secret("k1", "wipe")
	x.secret("k2", "wipe")
	x.secret("k3", "vault")

	r := x.apply(&DeleteDomainCmd{Tenant: x.tenant, Domain: "wipe"}).(*DeleteDomainResult)
	if r.Err != nil || r.Deleted != 4 || r.SkippedSecrets != 2 || r.LeftHiddenCount != 2 {
		t.Fatalf("result %+v, want deleted 4, skipped 2, left hidden 2", r)
	}
	if got := x.f.Domains(x.tenant); len(got) != 1 || got[0] != "keep" {
		t.Fatalf("domains %v", got)
	}
	if n := x.f.AtomCount(x.tenant); n != 2 {
		t.Fatalf("atom count %d", n)
	}
	tests := []struct {
		name, tenant, domain string
		deleted, skipped     int
		err                  error
	}{
		{"only secrets left", x.tenant, "wipe", 0, 2, nil},
		{"secret-only domain", x.tenant, "vault", 0, 1, nil},
		{"unknown domain", x.tenant, "nope", 0, 0, ErrNotFound},
		{"unknown tenant", "nobody", "keep", 0, 0, ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := x.apply(&DeleteDomainCmd{Tenant: tc.tenant, Domain: tc.domain}).(*DeleteDomainResult)
			if r.Deleted != tc.deleted || r.SkippedSecrets != tc.skipped || r.LeftHiddenCount != 0 {
				t.Fatalf("result %+v", r)
			}
			if (r.Err == nil) != (tc.err == nil) || (r.Err != nil && !errors.Is(r.Err, tc.err)) {
				t.Fatalf("error %v, want %v", r.Err, tc.err)
			}
		})
	}
	page, _ := x.f.ExportPage(x.tenant, nil, 100)
	if len(page) != 5 { // pa, pb and the three secrets
		t.Fatalf("export has %d atoms", len(page))
	}
}

func TestReset(t *testing.T) {
	x, _ := semanticFixture(t)
	y := &fixture{t: t, f: x.f, tenant: "other", n: x.n}
	y.put("other tenant", "d", oneHot(0))
	if r := x.apply(&ResetCmd{}); r != nil {
		t.Fatalf("reset result %v", r)
	}
	if x.f.AtomCount("org") != 0 || x.f.AtomCount("other") != 0 {
		t.Fatal("reset left atoms")
	}
	if x.f.StateHash() != New(testDim).StateHash() {
		t.Fatal("reset state differs from a fresh one")
	}
}
