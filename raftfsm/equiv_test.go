package raftfsm

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"sort"
	"strings"
	"testing"
)

// applyRef applies a command through ref, a reference version of its apply
// function, the way apply does (the sweep's writes first, under the lock).
func applyRef[R any](f *FSM, ref func() R) R {
	f.mu.RLock()
	swept := sweepWrite(f.vs, f.tenants, f.dim, sweepBytes)
	f.mu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	sweepCommit(swept)
	return ref()
}

// stateDump writes out, beside the snapshot's bytes, what a snapshot
// leaves out or sorts, one section per entry: the order of the tenants'
// lists (feed, postings, fingerprints, each domain's rows, slots and heavy
// rows), external refs, valence bounds, and the edges in creation order
// with the concept ids, adjacency, strong counts and top lists.
func stateDump(f *FSM) []string {
	// Each section is hashed: the states compared hold millions of edges.
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []string
	var b []byte
	u := func(v uint64) { b = binary.AppendUvarint(b, v) }
	s := func(v string) { u(uint64(len(v))); b = append(b, v...) }
	ids := func(list []*Atom) {
		u(uint64(len(list)))
		for _, a := range list {
			b = append(b, a.ID[:]...)
		}
	}
	section := func(name string) {
		sum := sha256.Sum256(b)
		out = append(out, name+" "+string(sum[:]))
		b = b[:0]
	}
	u(uint64(f.vs.rows))
	section("rows")
	for _, tid := range sortedKeys(f.tenants) {
		t := f.tenants[tid]
		u(uint64(t.lastCreated))
		u(math.Float64bits(t.valMin))
		u(math.Float64bits(t.valMax))
		u(uint64(len(t.atoms)))
		ids(t.feed)
		section("tenant " + tid)
		byName := postingsByName(t)
		for _, k := range sortedKeys(byName) {
			s(k)
			ids(byName[k])
		}
		section("postings")
		for _, k := range sortedKeys(t.prints) {
			s(k)
			ids(t.prints[k])
		}
		section("fingerprints")
		for _, k := range sortedKeys(t.extRefs) {
			s(k)
			b = append(b, t.extRefs[k].ID[:]...)
		}
		section("external refs")
		for _, k := range sortedKeys(t.domains) {
			d := t.domains[k]
			s(k)
			u(uint64(d.secrets))
			u(uint64(len(d.heavy)))
			for _, h := range d.heavy {
				u(uint64(h))
			}
			ids(d.rows)
			buf := make([]float32, f.dim)
			for i, a := range d.rows {
				u(uint64(a.slot))
				for _, x := range d.rowTo(i, f.dim, buf) {
					u(uint64(math.Float32bits(x)))
				}
			}
			section("domain " + k)
		}
		e := &t.edges
		for _, name := range e.concepts.names {
			s(name)
		}
		section("concept ids")
		for n := range e.count {
			r := e.rec(int32(n))
			u(uint64(r.id[0]))
			u(uint64(r.id[1]))
			u(math.Float64bits(r.Weight))
			u(uint64(r.Count))
			u(math.Float64bits(r.Valence))
			u(uint64(r.UpdatedAt))
		}
		section("edges")
		for c := range e.adj {
			u(uint64(len(e.adj[c])))
			for _, n := range e.adj[c] {
				u(uint64(n))
			}
			u(uint64(e.strong[c]))
			u(uint64(len(e.top[c])))
			for _, x := range e.top[c] {
				u(math.Float64bits(x.w))
				u(uint64(x.n))
			}
		}
		for _, x := range e.inTop {
			u(x)
		}
		section("adjacency")
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sameState fails unless the two states hash the same (StateHash, the
// snapshot bytes')
// and dump the same (stateDump).
func sameState(t *testing.T, what string, got, want *FSM) {
	t.Helper()
	if got.StateHash() != want.StateHash() {
		t.Fatalf("%s: the snapshots differ", what)
	}
	g, w := stateDump(got), stateDump(want)
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			name, _, _ := strings.Cut(g[i], " ")
			t.Fatalf("%s: the states differ in section %d (%s)", what, i, name)
		}
	}
	if len(g) != len(w) {
		t.Fatalf("%s: the states differ: %d sections against %d", what, len(g), len(w))
	}
}

// postingsByName is the tenant's non-empty postings by concept name: ids
// differ between states that hold the same atoms.
func postingsByName(t *tenant) map[string][]*Atom {
	out := map[string][]*Atom{}
	for id, list := range t.postings {
		if len(list) > 0 {
			out[t.edges.concepts.names[id]] = list
		}
	}
	return out
}
