package raftfsm

import (
	"slices"
	"testing"
)

func TestStats(t *testing.T) {
	x := newFixture(t)
	if st := x.f.Stats(x.tenant); st.TotalAtoms != 0 || st.Domains == nil || len(st.Domains) != 0 {
		t.Fatalf("empty tenant stats %+v", st)
	}
	a := x.item("a", "work", oneHot(0))
	a.Fingerprint, a.Concepts = "fp", []string{"x", "y", "z"}
	aid := x.store(a)
	b := x.item("b", "work", mix(0, 1, 0.5))
	b.Fingerprint, b.Type = "fp", Prototype
	x.store(b)
	c := x.item("c", "home", oneHot(2))
	c.Fingerprint, c.Type = "other", Singleton
	x.store(c)
	x.supersede("a2", "work", oneHot(3), aid)
	x.secret("k", "vault")
	x.secret("k2", "work")
	sec := x.item("context of k3", "work", nil)
	sec.Type, sec.ExternalRef, sec.Sealed = Secret, "secret:k3", []byte("sealed-k3")
	sec.Fingerprint = "secret only" // counted by no stats field
	x.store(sec)
	x.feedback(1, []ID{aid})

	st := x.f.Stats(x.tenant)
	want := Stats{TotalAtoms: 4, Episodes: 2, Prototypes: 1, Singletons: 1, HebbianEdges: 3,
		EpisodicFingerprints: 2, Domains: []string{"home", "work"}}
	if st.TotalAtoms != want.TotalAtoms || st.Episodes != want.Episodes || st.Prototypes != want.Prototypes ||
		st.Singletons != want.Singletons || st.HebbianEdges != want.HebbianEdges ||
		st.EpisodicFingerprints != want.EpisodicFingerprints || !slices.Equal(st.Domains, want.Domains) {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	// importances: a 1, b 0.5 (cosine 0.5 to a), c 1, a2 1.
	if !near(st.AvgValence, 0.3/4) || !near(st.AvgImportance, 3.5/4) {
		t.Fatalf("averages %v %v", st.AvgValence, st.AvgImportance)
	}
	if n := x.f.AtomCount(x.tenant); n != 4 {
		t.Fatalf("atom count %d", n)
	}
	if d := x.f.Domains(x.tenant); !slices.Equal(d, []string{"home", "work"}) {
		t.Fatalf("domains %v (a secret-only domain must not be listed)", d)
	}
	if d := x.f.Domains("nobody"); d == nil || len(d) != 0 || x.f.AtomCount("nobody") != 0 {
		t.Fatalf("unknown tenant domains %v", d)
	}
}

func TestExportPage(t *testing.T) {
	x, ids := feedFixture(t, 23) // 23 atoms and 4 secrets
	a, _ := x.f.Get(x.tenant, ids[0])
	if a.Content != "atom 0" {
		t.Fatalf("get %+v", a)
	}
	var got []Atom
	var cur *Cursor
	for pages := 0; ; pages++ {
		page, next := x.f.ExportPage(x.tenant, cur, 5)
		if len(page) > 5 || pages > 10 {
			t.Fatalf("page of %d", len(page))
		}
		got = append(got, page...)
		if next == nil {
			if len(page) != 0 {
				t.Fatal("a non-empty page without a cursor")
			}
			break
		}
		cur = next
	}
	if len(got) != 27 {
		t.Fatalf("exported %d atoms, want 27", len(got))
	}
	secrets := 0
	for i, a := range got {
		if i > 0 && !feedLess(&got[i-1], &a) {
			t.Fatal("export not in feed order")
		}
		if a.Type == Secret {
			secrets++
		}
	}
	if secrets != 4 {
		t.Fatalf("%d secrets exported", secrets)
	}
	if page, next := x.f.ExportPage("nobody", nil, 5); len(page) != 0 || next != nil {
		t.Fatal("export of an unknown tenant")
	}
	for _, limit := range []int{0, -1} {
		if page, next := x.f.ExportPage(x.tenant, nil, limit); len(page) != 0 || next != nil {
			t.Fatalf("export with limit %d", limit)
		}
	}
}

func TestIDs(t *testing.T) {
	id := ID{0x01, 0x8f, 0x3c, 0x4d, 0x5e, 0x6f, 0x70, 0x81, 0x92, 0xa3, 0xb4, 0xc5, 0xd6, 0xe7, 0xf8, 0x09}
	const s = "018f3c4d-5e6f-7081-92a3-b4c5d6e7f809"
	if id.String() != s {
		t.Fatalf("String = %s", id)
	}
	for _, in := range []string{s, "018F3C4D-5E6F-7081-92A3-B4C5D6E7F809"} {
		if got, err := ParseID(in); err != nil || got != id {
			t.Fatalf("ParseID(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", s[:35], s + "0", "018f3c4d_5e6f-7081-92a3-b4c5d6e7f809",
		"018f3c4d-5e6f-7081-92a3-b4c5d6e7f80g", "018f3c4d5e6f-7081-92a3-b4c5d6e7f8-09"} {
		if _, err := ParseID(bad); err == nil {
			t.Fatalf("ParseID(%q) accepted", bad)
		}
	}
	if !(ID{}).IsZero() || id.IsZero() {
		t.Fatal("IsZero")
	}
	for typ, name := range map[AtomType]string{Episode: "episode", Prototype: "prototype",
		Singleton: "singleton", Secret: "secret"} {
		if typ.String() != name {
			t.Fatalf("%d.String() = %s", typ, typ)
		}
	}
}
