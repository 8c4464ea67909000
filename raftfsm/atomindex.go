package raftfsm

import (
	"math/bits"
	"unsafe"
)

// atomIndex maps a read's atoms to int32 values: an open-addressing table
// (linear probing) keyed by the atom's address, for the stages that visit
// a thousand postings (countMatches, reach). A Go map hashed and compared
// the keys at 25-40 ns a lookup on the 2-core VM, a third of the counting
// stage and half of the associations' walk. The garbage collector does not
// move objects, so an address identifies its atom while the read holds it.
type atomIndex struct {
	keys  []*Atom
	vals  []int32
	shift uint // 64 - log2(len(keys))
	n     int
}

// reset empties the index and makes room for up to n atoms, the table at
// most half full.
func (m *atomIndex) reset(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if len(m.keys) != size {
		m.keys, m.vals = make([]*Atom, size), make([]int32, size)
		m.shift = uint(64 - bits.TrailingZeros(uint(size)))
	} else {
		clear(m.keys)
	}
	m.n = 0
}

// slot returns the value of a, added with value v when new (found false).
// It panics when the table is full: reset sizes it for every atom added.
func (m *atomIndex) slot(a *Atom, v int32) (val *int32, found bool) {
	mask := len(m.keys) - 1
	i := int(uint64(uintptr(unsafe.Pointer(a))) * 0x9e3779b97f4a7c15 >> m.shift)
	for {
		switch m.keys[i] {
		case a:
			return &m.vals[i], true
		case nil:
			if 2*(m.n+1) > len(m.keys) {
				panic("raftfsm: atomIndex over capacity")
			}
			m.keys[i], m.vals[i] = a, v
			m.n++
			return &m.vals[i], false
		}
		i = (i + 1) & mask
	}
}

// release drops the atoms' references, keeping the room.
func (m *atomIndex) release() { clear(m.keys) }
