package raftfsm

import (
	"fmt"
)

// restoreAtoms reads a tenant's atoms with their vectors (snapshot order,
// which is feed order) and indexes each as it is read, rebuilding every
// derived index: a streaming restore holds only a window of the snapshot.
// Each vector goes from the snapshot's bytes into its domain's arena; the
// blocks that fill in domains searched through codes get their codes (and
// go to disk when the state spills) on the blockCoder's goroutine while
// reading goes on, and the other blocks' codes are built last, on every
// core.
func (t *tenant) restoreAtoms(d *dec, dim int) error {
	n := d.count(16) // an atom takes more than its ID
	t.atoms = make(map[ID]*Atom, n)
	t.feed = make([]*Atom, 0, n)
	vec := make([]float32, dim)
	coder := newBlockCoder(dim)
	defer coder.finish()
	for j := 0; j < n && d.err == nil; j++ {
		a := d.atomOf(t)
		m := d.count(4)
		if d.err != nil {
			break
		}
		if a.Type != Secret && m != dim {
			return fmt.Errorf("%w: vector of dimension %d", ErrSnapshot, m)
		}
		raw := d.next(4*m, "vector")
		if d.err != nil {
			break
		}
		dm := t.indexCanonical(a, d.cids)
		if a.Type != Secret {
			getF32s(vec, raw)
			coder.add(dm, a, vec, n-j)
		}
	}
	if d.err != nil {
		return nil // the caller reports d.err
	}
	coder.finish()
	encodeCoded(t.domains, dim)
	return nil
}
