package raftfsm

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// testDim is the vector dimension of the hand-built test vectors.
const testDim = 8

// baseTime is an arbitrary unix-microsecond instant the tests count from.
const baseTime = int64(1_760_000_000_000_000)

// mkID returns a deterministic, ordered ID for n.
func mkID(n int) ID {
	var id ID
	binary.BigEndian.PutUint64(id[8:], uint64(n))
	id[6] = 0x70 // version 7 nibble, for looks only
	return id
}

// oneHot is the unit vector along axis i.
func oneHot(i int) []float32 {
	v := make([]float32, testDim)
	v[i] = 1
	return v
}

// mix returns a unit vector whose cosine with axis i is c, leaning toward
// axis j (i != j) for the rest.
func mix(i, j int, c float64) []float32 {
	v := make([]float32, testDim)
	v[i] = float32(c)
	v[j] = float32(math.Sqrt(1 - c*c))
	return v
}

// neg returns -v.
func neg(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

// fixture is one FSM with a tenant and counters for IDs and timestamps.
type fixture struct {
	t      *testing.T
	f      *FSM
	tenant string
	n      int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return &fixture{t: t, f: New(testDim), tenant: "org"}
}

// next returns a fresh ID and a timestamp later than every earlier one.
func (x *fixture) next() (ID, int64) {
	x.n++
	return mkID(x.n), baseTime + int64(x.n)*1000
}

// item builds a write item with a fresh ID and timestamp.
func (x *fixture) item(content, domain string, vec []float32) WriteItem {
	id, at := x.next()
	return WriteItem{ID: id, CreatedAt: at, Content: content, Domain: domain, Vector: vec}
}

func (x *fixture) apply(cmd interface{ Encode() []byte }) any {
	x.t.Helper()
	x.n++
	return x.f.Apply(uint64(x.n), cmd.Encode())
}

// writeRes applies a single write and returns the raw results.
func (x *fixture) writeRes(it WriteItem) *WriteResults {
	x.t.Helper()
	return x.apply(&WriteCmd{Tenant: x.tenant, Items: []WriteItem{it}}).(*WriteResults)
}

// write applies a single write that must not fail validation.
func (x *fixture) write(it WriteItem) WriteResult {
	x.t.Helper()
	res := x.writeRes(it)
	if res.Err != nil {
		x.t.Fatalf("write %q: unexpected error %v", it.Content, res.Err)
	}
	if len(res.Results) != 1 {
		x.t.Fatalf("write %q: %d results", it.Content, len(res.Results))
	}
	return res.Results[0]
}

// store writes an item that must pass the gate and returns its ID.
func (x *fixture) store(it WriteItem) ID {
	x.t.Helper()
	r := x.write(it)
	if !r.Stored {
		x.t.Fatalf("write %q refused: %s", it.Content, r.Reason)
	}
	return r.AtomID
}

// put stores content in domain with vec and optional concepts.
func (x *fixture) put(content, domain string, vec []float32, concepts ...string) ID {
	x.t.Helper()
	it := x.item(content, domain, vec)
	it.Concepts = concepts
	return x.store(it)
}

// supersede stores a new revision of the targets.
func (x *fixture) supersede(content, domain string, vec []float32, targets ...ID) ID {
	x.t.Helper()
	it := x.item(content, domain, vec)
	it.Supersedes = targets
	return x.store(it)
}

// secret stores a sealed secret under secret:<alias>.
func (x *fixture) secret(alias, domain string) ID {
	x.t.Helper()
	it := x.item("context of "+alias, domain, nil)
	it.Type = Secret
	it.ExternalRef = "secret:" + alias
	it.Sealed = []byte("sealed-" + alias)
	return x.store(it)
}

func (x *fixture) feedback(outcome float64, ids []ID, queryConcepts ...string) *FeedbackResult {
	x.t.Helper()
	_, at := x.next()
	return x.apply(&FeedbackCmd{Tenant: x.tenant, IDs: ids, Outcome: outcome,
		QueryConcepts: queryConcepts, At: at}).(*FeedbackResult)
}

func (x *fixture) deleteAtom(id ID) *DeleteAtomResult {
	x.t.Helper()
	return x.apply(&DeleteAtomCmd{Tenant: x.tenant, ID: id}).(*DeleteAtomResult)
}

func (x *fixture) get(id ID) Atom {
	x.t.Helper()
	a, ok := x.f.Get(x.tenant, id)
	if !ok {
		x.t.Fatalf("atom %s not found", id)
	}
	return a
}

// read runs a search with the fixture's tenant filled in.
func (x *fixture) read(req ReadRequest) *ReadResult {
	x.t.Helper()
	req.Tenant = x.tenant
	return x.f.Read(&req)
}

// itemIDs lists the atom IDs of search items in order.
func itemIDs(items []Item) []ID {
	out := make([]ID, len(items))
	for i, it := range items {
		out[i] = it.Atom.ID
	}
	return out
}

// atomIDs lists the IDs of atoms in order.
func atomIDs(atoms []Atom) []ID {
	out := make([]ID, len(atoms))
	for i, a := range atoms {
		out[i] = a.ID
	}
	return out
}

func findItem(items []Item, id ID) (Item, bool) {
	for _, it := range items {
		if it.Atom.ID == id {
			return it, true
		}
	}
	return Item{}, false
}

func assertIDs(t *testing.T, what string, got, want []ID) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func assertApplyErr(t *testing.T, err *ApplyError, kind error, target ID) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %v (kind %v), want kind %v", err, err.Kind, kind)
	}
	if err.Target != target {
		t.Fatalf("error target %s, want %s", err.Target, target)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func ptr[T any](v T) *T { return &v }

// unit returns the normalised vector with the given leading components.
func unit(c ...float64) []float32 {
	var n float64
	for _, x := range c {
		n += x * x
	}
	n = math.Sqrt(n)
	v := make([]float32, testDim)
	for i, x := range c {
		v[i] = float32(x / n)
	}
	return v
}

// randomUnit returns a random unit vector of dimension dim.
func randomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// vector returns a copy of the atom's row, or nil for a secret.
func (t *tenant) vector(a *Atom, dim int) []float32 {
	if a.slot < 0 {
		return nil
	}
	return slices.Clone(t.domains[a.Domain].vecTo(a, dim, make([]float32, dim)))
}
