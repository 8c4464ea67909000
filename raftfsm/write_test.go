package raftfsm

import (
	"fmt"
	"strings"
	"testing"
)

func TestWriteGate(t *testing.T) {
	x := newFixture(t)
	first := x.write(x.item("first", "work", oneHot(0)))
	if !first.Stored || first.Importance != 1 || first.Reason != "stored" {
		t.Fatalf("first atom of a domain: %+v, want stored with importance 1", first)
	}

	tests := []struct {
		name       string
		domain     string
		vec        []float32
		stored     bool
		importance float64
	}{
		{"exact duplicate refused", "work", oneHot(0), false, 0},
		{"near duplicate refused", "work", mix(0, 1, 1-1e-7), false, 0},
		{"same vector in another domain stored", "home", oneHot(0), true, 1},
		{"just below the threshold stored", "work", mix(0, 1, 1-1e-5), true, 1e-5},
		{"orthogonal is fully novel", "work", oneHot(2), true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := x.write(x.item(tc.name, tc.domain, tc.vec))
			if r.Stored != tc.stored {
				t.Fatalf("stored = %v (%s), want %v", r.Stored, r.Reason, tc.stored)
			}
			if !tc.stored {
				if !r.AtomID.IsZero() || len(r.Superseded) != 0 || r.Superseded == nil {
					t.Fatalf("refused write: %+v", r)
				}
				want := "duplicate of " + first.AtomID.String()
				if !strings.HasPrefix(r.Reason, want) {
					t.Fatalf("reason %q does not name %s", r.Reason, first.AtomID)
				}
				return
			}
			if diff := r.Importance - tc.importance; diff > 1e-6 || diff < -1e-6 {
				t.Fatalf("importance = %v, want %v", r.Importance, tc.importance)
			}
		})
	}
}

func TestWriteImportanceIsOneMinusMaxCos(t *testing.T) {
	tests := []struct {
		name string
		vecs [][]float32 // stored first, in order
		vec  []float32
		want float64
	}{
		{"empty domain", nil, oneHot(0), 1},
		{"one neighbour", [][]float32{oneHot(0)}, mix(0, 1, 0.6), 0.4},
		{"nearest of several", [][]float32{oneHot(0), oneHot(3)}, mix(3, 1, 0.8), 0.2},
		{"negative cosine clamps to 1", [][]float32{oneHot(0)}, neg(oneHot(0)), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newFixture(t)
			for i, v := range tc.vecs {
				x.put(fmt.Sprint("seed ", i), "d", v)
			}
			r := x.write(x.item("probe", "d", tc.vec))
			if !r.Stored || !near(r.Importance, tc.want) {
				t.Fatalf("got %+v, want stored with importance %v", r, tc.want)
			}
			if got := x.get(r.AtomID).Importance; got != r.Importance {
				t.Fatalf("stored importance %v, result %v", got, r.Importance)
			}
		})
	}
}

func TestWriteGateIgnoresSupersededAtoms(t *testing.T) {
	x := newFixture(t)
	old := x.put("old", "d", oneHot(0))
	x.supersede("new", "d", oneHot(1), old)
	// old is history now: the same vector again is novel against the live tip.
	r := x.write(x.item("old again", "d", oneHot(0)))
	if !r.Stored || r.Importance != 1 {
		t.Fatalf("got %+v, want stored with importance 1", r)
	}
}

func TestWriteGateSkipsOwnTargets(t *testing.T) {
	x := newFixture(t)
	old := x.put("old", "d", oneHot(0))
	// A corrected revision with the same embedding replaces its target.
	r := x.write(func() WriteItem {
		it := x.item("old, corrected", "d", oneHot(0))
		it.Supersedes = []ID{old}
		return it
	}())
	if !r.Stored || r.Importance != 1 {
		t.Fatalf("got %+v, want stored with importance 1", r)
	}
}

func TestWriteCreatedAtStrictlyIncreasing(t *testing.T) {
	x := newFixture(t)
	a := x.item("a", "d", oneHot(0))
	b := x.item("b", "d", oneHot(1))
	b.CreatedAt = a.CreatedAt - 500 // a clock step backwards on another router
	idA, idB := x.store(a), x.store(b)
	if ca, cb := x.get(idA).CreatedAt, x.get(idB).CreatedAt; cb != ca+1 {
		t.Fatalf("created_at %d then %d, want the second bumped to %d", ca, cb, ca+1)
	}
}

func TestWriteExternalRef(t *testing.T) {
	x := newFixture(t)
	target := x.put("target", "d", oneHot(5))
	it := x.item("first", "d", oneHot(0))
	it.ExternalRef = "ticket-1"
	it.Supersedes = []ID{target}
	first := x.write(it)
	before := x.f.StateHash()

	tests := []struct {
		name string
		edit func(*WriteItem)
	}{
		{"plain retry", func(*WriteItem) {}},
		{"different vector", func(it *WriteItem) { it.Vector = oneHot(1) }},
		{"different domain", func(it *WriteItem) { it.Domain = "other" }},
		{"retry naming a superseded target", func(it *WriteItem) { it.Supersedes = []ID{target} }},
		{"retry naming a missing target", func(it *WriteItem) { it.Supersedes = []ID{mkID(9999)} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := x.item("second", "d", oneHot(0))
			it.ExternalRef = "ticket-1"
			tc.edit(&it)
			res := x.writeRes(it)
			if res.Err != nil || len(res.Results) != 1 {
				t.Fatalf("got error %v, want the existing atom", res.Err)
			}
			r := res.Results[0]
			if r.Stored || r.AtomID != first.AtomID || r.Reason != "external_ref exists" ||
				r.Superseded == nil || len(r.Superseded) != 0 {
				t.Fatalf("got %+v, want stored=false, atom_id %s, reason external_ref exists", r, first.AtomID)
			}
			if x.f.StateHash() != before {
				t.Fatal("a refused external_ref write changed the state")
			}
		})
	}
	a, ok := x.f.GetByExternalRef(x.tenant, "ticket-1")
	if !ok || a.ID != first.AtomID || a.Content != "first" {
		t.Fatalf("GetByExternalRef = %v %v", a.ID, ok)
	}
}

func TestWriteSupersedeValidation(t *testing.T) {
	tests := []struct {
		name   string
		kind   error
		setup  func(x *fixture, live, replaced, successor, secret ID) ([]ID, ID) // targets, error target
		domain string
	}{
		{"missing target", ErrNotFound, func(x *fixture, live, _, _, _ ID) ([]ID, ID) {
			return []ID{live, mkID(7777)}, mkID(7777)
		}, "d"},
		{"already superseded names its successor", ErrConflict, func(x *fixture, live, replaced, successor, _ ID) ([]ID, ID) {
			return []ID{live, replaced}, successor
		}, "d"},
		{"secret target", ErrConflict, func(x *fixture, live, _, _, secret ID) ([]ID, ID) {
			return []ID{live, secret}, secret
		}, "d"},
		{"stops at the first failure", ErrNotFound, func(x *fixture, _, replaced, _, _ ID) ([]ID, ID) {
			return []ID{mkID(8888), replaced}, mkID(8888)
		}, "d"},
		{"first failure is the conflict", ErrConflict, func(x *fixture, _, replaced, successor, _ ID) ([]ID, ID) {
			return []ID{replaced, mkID(8888)}, successor
		}, "d"},
		{"target of another tenant is not found", ErrNotFound, func(x *fixture, _, _, _, _ ID) ([]ID, ID) {
			y := &fixture{t: x.t, f: x.f, tenant: "other", n: x.n}
			foreign := y.put("foreign", "d", oneHot(6))
			x.n = y.n
			return []ID{foreign}, foreign
		}, "d"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newFixture(t)
			live := x.put("live", "d", oneHot(0))
			replaced := x.put("replaced", "d", oneHot(1))
			successor := x.supersede("successor", "d", oneHot(2), replaced)
			secret := x.secret("key", "d")
			targets, wantTarget := tc.setup(x, live, replaced, successor, secret)
			before := x.f.StateHash()
			count := x.f.AtomCount(x.tenant)

			it := x.item("new", tc.domain, oneHot(3))
			it.Supersedes = targets
			res := x.writeRes(it)
			assertApplyErr(t, res.Err, tc.kind, wantTarget)
			if !strings.Contains(res.Err.Error(), "Supersede target") {
				t.Fatalf("message %q", res.Err.Error())
			}
			if res.Results != nil {
				t.Fatalf("results %+v alongside an error", res.Results)
			}
			if x.f.StateHash() != before || x.f.AtomCount(x.tenant) != count {
				t.Fatal("a failed supersede touched the state")
			}
			if a := x.get(live); a.Superseded() {
				t.Fatal("a valid target before the failure was marked")
			}
		})
	}
}

func TestWriteSupersedeSuccess(t *testing.T) {
	x := newFixture(t)
	a := x.put("a", "work", oneHot(0))
	b := x.put("b", "work", oneHot(1))
	it := x.item("a and b merged", "archive", mix(0, 1, 0.7))
	it.Supersedes = []ID{b, a}
	r := x.write(it)
	if !r.Stored {
		t.Fatalf("refused: %s", r.Reason)
	}
	assertIDs(t, "superseded", r.Superseded, []ID{b, a})
	for _, id := range []ID{a, b} {
		if got := x.get(id).SupersededBy; got != r.AtomID {
			t.Fatalf("%s superseded_by = %s, want %s", id, got, r.AtomID)
		}
	}
	n := x.get(r.AtomID)
	assertIDs(t, "new atom supersedes", n.Supersedes, []ID{b, a})
	if n.Domain != "archive" || n.Superseded() {
		t.Fatalf("new atom %+v", n)
	}
	plain := x.write(x.item("plain", "work", oneHot(4)))
	if plain.Superseded == nil || len(plain.Superseded) != 0 {
		t.Fatalf("superseded = %#v, want []", plain.Superseded)
	}
}

func TestWriteBatch(t *testing.T) {
	x := newFixture(t)
	target := x.put("target", "d", oneHot(7))
	items := []WriteItem{
		x.item("one", "d", oneHot(0)),
		x.item("one again", "d", oneHot(0)), // duplicate of the item before it
		x.item("two", "e", oneHot(0)),
	}
	items[2].Supersedes = []ID{target} // not honoured in a batch
	res := x.apply(&WriteCmd{Tenant: x.tenant, Batch: true, Items: items}).(*WriteResults)
	if res.Err != nil || len(res.Results) != 3 {
		t.Fatalf("batch: %+v", res)
	}
	got := []bool{res.Results[0].Stored, res.Results[1].Stored, res.Results[2].Stored}
	if got[0] != true || got[1] != false || got[2] != true {
		t.Fatalf("stored = %v, want [true false true]", got)
	}
	if a := x.get(target); a.Superseded() || len(res.Results[2].Superseded) != 0 {
		t.Fatal("a batch item superseded its target")
	}
	if s := x.get(res.Results[2].AtomID).Supersedes; len(s) != 0 {
		t.Fatalf("batch atom records supersedes %v that were never applied", s)
	}
}

func TestWriteSecret(t *testing.T) {
	x := newFixture(t)
	id := x.secret("db", "ops")
	stale := x.item("new context", "ops", nil)
	stale.Type, stale.ExternalRef, stale.Sealed = Secret, "secret:db", []byte("sealed for another id")
	if r := x.write(stale); r.Stored || r.AtomID != id || r.Reason != ReasonSecretIDMismatch {
		t.Fatalf("secret sealed for another atom ID: %+v, want refused naming %s", r, id)
	}
	again := x.item("new context", "ops", nil)
	again.ID, again.Type, again.ExternalRef, again.Sealed = id, Secret, "secret:db", []byte("v2")
	r := x.write(again)
	if !r.Stored || r.AtomID != id || r.Reason != "replaced" {
		t.Fatalf("replacing a secret: %+v, want its ID %s kept", r, id)
	}
	if _, ok := x.f.Get(x.tenant, id); ok {
		t.Fatal("Get returned a secret")
	}
	if _, ok := x.f.GetByExternalRef(x.tenant, "secret:db"); ok {
		t.Fatal("GetByExternalRef returned a secret")
	}
	page, _ := x.f.ExportPage(x.tenant, nil, 10)
	if len(page) != 1 || string(page[0].Sealed) != "v2" || page[0].Content != "new context" {
		t.Fatalf("export %+v", page)
	}
	// A save without a context keeps the context stored when it applies,
	// not the one its router read before another save changed it.
	keep := again
	keep.Content, keep.Sealed, keep.KeepContent = "context read before", []byte("v3"), true
	if r := x.write(keep); !r.Stored {
		t.Fatalf("a save keeping the context: %+v", r)
	}
	page, _ = x.f.ExportPage(x.tenant, nil, 10)
	if len(page) != 1 || string(page[0].Sealed) != "v3" || page[0].Content != "new context" {
		t.Fatalf("after a save keeping the context: %+v", page)
	}
	// A first save keeping the context (none stored) stores its content.
	first := x.item("", "ops", nil)
	first.Type, first.ExternalRef, first.Sealed, first.KeepContent = Secret, "secret:api", []byte("s"), true
	x.write(first)
	if a, ok := x.f.Secret(x.tenant, "secret:api"); !ok || a.Content != "" {
		t.Fatalf("a first save without a context: %+v", a)
	}
}

func TestWriteWrongDimensionPanics(t *testing.T) {
	x := newFixture(t)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic on a vector of the wrong dimension")
		}
	}()
	x.write(x.item("short", "d", []float32{1}))
}
