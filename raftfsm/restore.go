package raftfsm

import (
	"fmt"
)

// restoreAtoms reads a tenant's atoms with their vectors (snapshot order,
// which is feed order) and indexes them, rebuilding every derived index.
// The atoms are read before any is indexed, so the atoms map, the feed and
// each domain's arena and row list are allocated at their final size, and
// each row is decoded from the snapshot bytes into its arena. The codes of
// the domains searched through them are built last, on every core.
func (t *tenant) restoreAtoms(d *dec, dim int) error {
	type pending struct {
		a   *Atom
		raw []byte // the vector's little-endian float32s
	}
	n := d.count(1)
	atoms := make([]pending, 0, n)
	rows := make(map[string]int)
	for j := 0; j < n && d.err == nil; j++ {
		a := d.atom()
		m := d.count(4)
		if d.err != nil {
			break
		}
		if a.Type != Secret && m != dim {
			return fmt.Errorf("%w: vector of dimension %d", ErrSnapshot, m)
		}
		atoms = append(atoms, pending{a, d.b[:4*m]})
		d.b = d.b[4*m:]
		if a.Type != Secret {
			rows[a.Domain]++
		}
	}
	if d.err != nil {
		return nil // the caller reports d.err
	}
	t.atoms = make(map[ID]*Atom, len(atoms))
	t.feed = make([]*Atom, 0, len(atoms))
	vec := make([]float32, dim)
	for _, p := range atoms {
		dm := t.index(p.a)
		if p.a.Type == Secret {
			continue
		}
		if dm.rows == nil {
			dm.reserve(rows[dm.name], dim)
		}
		getF32s(vec, p.raw)
		dm.addRow(p.a, vec)
	}
	encodeCoded(t.domains, dim)
	return nil
}
