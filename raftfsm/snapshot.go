package raftfsm

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"sort"
)

// Snapshot format: magic, version byte, then the body. A golden file of
// every version lives in testdata/ and must keep restoring.
const (
	snapshotMagic   = "HEBBFSM"
	snapshotVersion = 1
)

// Snapshot encodes the whole state under the read lock and returns a
// function that writes the bytes later, without touching live state.
func (f *FSM) Snapshot() (func(w io.Writer) error, error) {
	f.mu.RLock()
	chunks := f.encodeChunks()
	f.mu.RUnlock()
	return func(w io.Writer) error {
		for _, c := range chunks {
			if _, err := w.Write(c); err != nil {
				return fmt.Errorf("cannot write snapshot: %w", err)
			}
		}
		return nil
	}, nil
}

// StateHash is the SHA-256 of the snapshot bytes: equal states hash equal.
func (f *FSM) StateHash() [32]byte {
	f.mu.RLock()
	defer f.mu.RUnlock()
	h := sha256.New()
	for _, c := range f.encodeChunks() {
		h.Write(c)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// encodeState is the snapshot's bytes in one slice.
func (f *FSM) encodeState() []byte { return bytes.Join(f.encodeChunks(), nil) }

// encodeChunks encodes the state (the snapshot's bytes) in chunks of about
// chunkBytes.
func (f *FSM) encodeChunks() [][]byte {
	e := enc{}
	e.b = append(e.b, snapshotMagic...)
	e.u8(snapshotVersion)
	e.uvarint(uint64(f.dim))
	ids := make([]string, 0, len(f.tenants))
	for id := range f.tenants {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	e.uvarint(uint64(len(ids)))
	for _, id := range ids {
		t := f.tenants[id]
		e.str(t.id)
		e.varint(t.lastCreated)
		e.uvarint(uint64(len(t.feed)))
		for _, a := range t.feed {
			e.atom(a)
			e.f32s(t.vector(a, f.dim))
			e.cut()
		}
		edges := t.edges.sorted()
		e.uvarint(uint64(len(edges)))
		for _, ed := range edges {
			e.str(ed.A)
			e.str(ed.B)
			e.f64(ed.Weight)
			e.varint(ed.Count)
			e.f64(ed.Valence)
			e.varint(ed.UpdatedAt)
			e.cut()
		}
		idem := t.sortedIdem()
		e.uvarint(uint64(len(idem)))
		for _, r := range idem {
			e.idemRecord(r)
		}
		e.room(t.room)
		e.chat(t.chat)
		e.cut()
	}
	return e.all()
}

// Restore replaces all state with the snapshot's.
func (f *FSM) Restore(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("cannot read snapshot: %w", err)
	}
	tenants, dim, err := decodeState(b)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dim != 0 && dim != f.dim {
		return fmt.Errorf("%w: dimension %d, group expects %d", ErrSnapshot, dim, f.dim)
	}
	f.dim = dim
	f.tenants = tenants
	return nil
}

func decodeState(b []byte) (map[string]*tenant, int, error) {
	if len(b) < len(snapshotMagic)+1 || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, 0, fmt.Errorf("%w: missing magic", ErrSnapshot)
	}
	d := &dec{b: b[len(snapshotMagic):]}
	if v := d.u8(); v != snapshotVersion {
		return nil, 0, fmt.Errorf("%w: unknown version %d", ErrSnapshot, v)
	}
	dim := d.n(math.MaxInt32)
	n := d.count(1)
	tenants := make(map[string]*tenant, n)
	for i := 0; i < n && d.err == nil; i++ {
		t := newTenant(d.str())
		last := d.varint()
		if err := t.restoreAtoms(d, dim); err != nil {
			return nil, 0, err
		}
		t.lastCreated = last
		edges := d.count(1)
		for j := 0; j < edges && d.err == nil; j++ {
			e := &Edge{A: d.str(), B: d.str(), Weight: d.f64(), Count: d.varint(),
				Valence: d.f64(), UpdatedAt: d.varint()}
			t.edges.link(e)
		}
		idem := d.count(1)
		for j := 0; j < idem && d.err == nil; j++ {
			r := d.idemRecord()
			t.idem[r.key] = r
		}
		t.room = d.room()
		t.chat = d.chat()
		tenants[t.id] = t
	}
	if d.err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrSnapshot, d.err)
	}
	if len(d.b) != 0 {
		return nil, 0, fmt.Errorf("%w: %d trailing bytes", ErrSnapshot, len(d.b))
	}
	return tenants, dim, nil
}
