package raftfsm

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"sync"
)

// Snapshot format: magic, version byte, then the body. A golden file of
// every version lives in testdata/ and must keep restoring.
const (
	snapshotMagic   = "HEBBFSM"
	snapshotVersion = 1
)

// Snapshot freezes the state under the read lock (copies of the atoms and
// edge rows; vectors stay in arenas that later writes leave alone, see
// domainIndex.shared) and returns a function that encodes and writes it
// later without a lock: Raft runs Snapshot between applies, so only the
// freezing holds writes up, not the encoding.
func (f *FSM) Snapshot() (func(w io.Writer) error, error) {
	f.mu.RLock()
	fr := f.freeze(true)
	f.mu.RUnlock()
	if fr.hold != nil {
		// Raft may drop a snapshot it never writes (its sink could not be
		// made): its hold then goes with the snapshot.
		runtime.AddCleanup(fr, (*snapHold).release, fr.hold)
	}
	return func(w io.Writer) error {
		defer fr.done()
		var err error
		fr.encode(func(chunk []byte) {
			if err == nil {
				if _, werr := w.Write(chunk); werr != nil {
					err = fmt.Errorf("cannot write snapshot: %w", werr)
				}
			}
		})
		return err
	}, nil
}

// StateHash is the SHA-256 of the snapshot bytes: equal states hash equal.
func (f *FSM) StateHash() [32]byte {
	f.mu.RLock()
	defer f.mu.RUnlock()
	h := sha256.New()
	f.freeze(false).encode(func(chunk []byte) { h.Write(chunk) })
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// encodeState is the snapshot's bytes in one slice.
func (f *FSM) encodeState() []byte {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var b []byte
	f.freeze(false).encode(func(chunk []byte) { b = append(b, chunk...) })
	return b
}

// frozen is the state as a snapshot saw it, encodable without a lock.
type frozen struct {
	dim     int
	tenants []frozenTenant // by ID
	hold    *snapHold      // a shared freeze's, until done
}

// snapHold is what a shared freeze holds until its snapshot is written, or
// dropped unwritten, let go once: the file of rows on disk (pinned, so
// that the extents it reads are not reused) and its count in the state's
// open snapshots (vecStore.open), without which the rows and edge chunks
// it marked shared need no copying before a change.
type snapHold struct {
	file *vecFile // nil: no rows on disk
	open *openSnaps
	once sync.Once
}

func (h *snapHold) release() {
	h.once.Do(func() {
		if h.file != nil {
			h.file.unpin()
		}
		h.open.n.Add(-1)
	})
}

// done lets go of what the snapshot held.
func (fr *frozen) done() {
	if fr.hold != nil {
		fr.hold.release()
	}
}

// frozenVec is a row a snapshot encodes: in memory (mem), or row row of a
// block on disk; neither for a secret.
type frozenVec struct {
	mem  []float32
	disk *diskBlock
	row  int32
}

type frozenTenant struct {
	id          string
	lastCreated int64
	feed        []frozenAtom // in feed order
	vecs        []frozenVec  // feed[i]'s vector
	edges       frozenEdges  // the slab's chunks, copied and sorted when encoded
	rest        []byte       // idempotency records, room and chat, encoded
}

// freeze copies what writes change in place. With share, the domains'
// arenas are marked shared, so that the next write that would overwrite a
// row copies its arena first: the frozen vectors stay valid after the lock
// is released. Without it the caller must hold the lock until it encodes.
func (f *FSM) freeze(share bool) *frozen {
	fr := &frozen{dim: f.dim}
	var open *openSnaps // the count a shared freeze is in
	if share {
		open = &f.vs.open
		fr.hold = &snapHold{file: f.vs.file, open: open}
		if f.vs.file != nil {
			f.vs.file.pin()
		}
		open.n.Add(1)
	}
	ids := make([]string, 0, len(f.tenants))
	for id := range f.tenants {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t := f.tenants[id]
		ft := frozenTenant{id: t.id, lastCreated: t.lastCreated,
			feed: make([]frozenAtom, len(t.feed)), vecs: make([]frozenVec, len(t.feed))}
		for i, a := range t.feed {
			ft.feed[i] = freezeAtom(a)
			ft.vecs[i] = t.frozenVec(a, f.dim)
		}
		if share {
			for _, d := range t.domains {
				d.shared = true
			}
		}
		ft.edges = t.edges.freeze(share, open)
		e := enc{}
		idem := t.sortedIdem()
		e.uvarint(uint64(len(idem)))
		for _, r := range idem {
			e.idemRecord(r)
		}
		e.room(t.room)
		e.chat(t.chat)
		ft.rest = e.b
		fr.tenants = append(fr.tenants, ft)
	}
	return fr
}

// encode encodes the frozen state (the snapshot's bytes), passing out
// chunks of about chunkBytes in order; a chunk's bytes are reused once out
// returns.
func (fr *frozen) encode(out func(chunk []byte)) {
	e := enc{}
	e.b = append(e.b, snapshotMagic...)
	e.u8(snapshotVersion)
	e.uvarint(uint64(fr.dim))
	e.uvarint(uint64(len(fr.tenants)))
	row := make([]float32, fr.dim)
	for i := range fr.tenants {
		t := &fr.tenants[i]
		e.str(t.id)
		e.varint(t.lastCreated)
		e.uvarint(uint64(len(t.feed)))
		for j := range t.feed {
			a := t.feed[j].atom()
			e.atom(&a)
			v := t.vecs[j].mem
			if b := t.vecs[j].disk; b != nil {
				v = row
				b.ReadRow(int(t.vecs[j].row), v)
			}
			e.f32s(v)
			e.cut(out)
		}
		order := t.edges.order()
		e.uvarint(uint64(len(order)))
		for _, n := range order {
			ed := t.edges.at(n)
			e.str(t.edges.names[ed.id[0]])
			e.str(t.edges.names[ed.id[1]])
			e.f64(ed.Weight)
			e.varint(ed.Count)
			e.f64(ed.Valence)
			e.varint(ed.UpdatedAt)
			e.cut(out)
		}
		e.b = append(e.b, t.rest...)
		e.cut(out)
	}
	out(e.b)
}

// Restore replaces all state with the snapshot's. When r tells its size
// (a Size() int64 method, as the shard's snapshot store does) the snapshot
// is decoded as it is read; otherwise it is read whole first.
func (f *FSM) Restore(r io.Reader) error {
	var size int64
	if s, ok := r.(interface{ Size() int64 }); ok {
		size = s.Size()
	}
	if stop := f.restoreStop.Load(); stop != nil {
		r = stoppableReader{r: r, done: stop.done}
	}
	var d *dec
	if size > 0 {
		d = streamDec(r, size, windowBytes)
	} else {
		b, err := io.ReadAll(r) // not the shard's restore: small snapshots
		if err != nil {
			return fmt.Errorf("cannot read snapshot: %w", err)
		}
		d = &dec{b: b}
	}
	vs := f.vs.fresh()
	tenants, dim, err := decodeFrom(d, vs)
	if err == nil && f.dim != 0 && dim != f.dim {
		err = fmt.Errorf("%w: dimension %d, group expects %d", ErrSnapshot, dim, f.dim)
	}
	if err != nil {
		vs.close()
		if errors.Is(err, ErrRestoreStopped) {
			return ErrRestoreStopped // not a bad snapshot
		}
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dim = dim
	f.setTenants(tenants)
	f.vs.close()
	f.vs = vs
	return nil
}

func decodeFrom(d *dec, vs *vecStore) (map[string]*tenant, int, error) {
	magic := d.next(len(snapshotMagic), "magic")
	if d.err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrSnapshot, d.err)
	}
	if string(magic) != snapshotMagic {
		return nil, 0, fmt.Errorf("%w: missing magic", ErrSnapshot)
	}
	if v := d.u8(); v != snapshotVersion {
		return nil, 0, fmt.Errorf("%w: unknown version %d", ErrSnapshot, v)
	}
	dim := d.n(math.MaxInt32)
	vs.dim = dim
	n := d.count(1)
	tenants := make(map[string]*tenant, n)
	for i := 0; i < n && d.err == nil; i++ {
		t := newTenant(d.str(), vs)
		last := d.varint()
		if err := t.restoreAtoms(d, dim); err != nil {
			return nil, 0, err
		}
		t.lastCreated = last
		// An edge takes at least two name lengths, two f64s and two varints:
		// a count that cannot fit is refused before the map is sized by it.
		edges := d.count(2 + 8 + 1 + 8 + 1)
		t.edges.pairs = newPairIndex(edges)
		ix := buildPairs(&t.edges.pairs)
		names := &t.edges.concepts
		a := int32(-1)
		for j := 0; j < edges && d.err == nil; j++ {
			// Edges come ordered by A's name, so A is mostly the last
			// edge's: a comparison instead of a lookup in the table.
			if v := d.view(); a < 0 || string(v) != names.names[a] {
				a = names.internBytes(v)
			}
			b := names.internBytes(d.view())
			ix.put(pairKey(a, b), t.edges.link(a, b, edgeRec{Weight: d.f64(), Count: d.varint(), Valence: d.f64(), UpdatedAt: d.varint()}))
		}
		ix.wait()
		idem := d.count(1)
		for j := 0; j < idem && d.err == nil; j++ {
			t.addIdem(d.idemRecord())
		}
		t.room = d.room()
		t.chat = d.chat()
		tenants[t.id] = t
	}
	if d.err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrSnapshot, d.err)
	}
	if len(d.b) != 0 || d.src != nil && d.src.trailing() {
		return nil, 0, fmt.Errorf("%w: trailing bytes", ErrSnapshot)
	}
	spillAll(vs, tenants, dim) // the blocks filled before the state grew to spill
	return tenants, dim, nil
}
