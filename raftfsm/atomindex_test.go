package raftfsm

import (
	"math/rand"
	"testing"
)

// TestAtomIndex: values found again, new atoms added, after resets of
// several sizes; the table panics rather than fill up.
func TestAtomIndex(t *testing.T) {
	var m atomIndex
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{1, 7, 100, 1024, 3000} {
		m.reset(n)
		atoms := make([]*Atom, n)
		for i := range atoms {
			atoms[i] = &Atom{}
		}
		want := map[*Atom]int32{}
		for range 3 * n {
			a := atoms[rng.Intn(n)]
			v, found := m.slot(a, int32(len(want)))
			w, ok := want[a]
			if found != ok {
				t.Fatalf("n %d: found %v, want %v", n, found, ok)
			}
			if !ok {
				want[a] = int32(len(want))
				continue
			}
			if *v != w {
				t.Fatalf("n %d: value %d, want %d", n, *v, w)
			}
			*v += 0 // writable
		}
		v, _ := m.slot(atoms[0], -1)
		*v = 42
		if v, found := m.slot(atoms[0], -1); !found || *v != 42 {
			t.Fatalf("n %d: a stored value did not stay", n)
		}
	}
	m.reset(3)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic past capacity")
		}
	}()
	for range 20 {
		m.slot(&Atom{}, 0)
	}
}
