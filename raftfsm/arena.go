package raftfsm

import (
	"slices"

	"github.com/hebbdb/hebb/vecmath"
)

// domainIndex is one domain's vectors: row i belongs to rows[i] and lies in
// block i/arenaRows. Secrets have no vector and are only counted.
//
// Each block keeps its rows' compact codes (vecmath.Codes) while the domain
// holds at least codedRows/4 rows, and always when it holds codedRows or
// more, which is when searches and the write gate use them. They are
// derived state: a function of each row's vector, so not in snapshots;
// restore rebuilds them as blocks fill and once the rows are back
// (blockCoder, encodeCoded).
type domainIndex struct {
	name    string // the domain's name; its atoms share this string
	blocks  []arenaBlock
	rows    []*Atom
	sigs    []signature // per row: its atom's metadata signature (metaSig)
	secrets int
	// shared is set when a snapshot holds on to the blocks' rows (freeze):
	// the next write that would overwrite a row copies the blocks first,
	// unless no snapshot is open any more (vecStore.open).
	shared bool
	vs     *vecStore // the state's: whether its rows go to disk (spill.go)
	// heavy lists, ascending, the slots of the rows whose atom has a
	// positive valence: searches bound them by the tenant's largest
	// weight and every other row by 1 (vecmath Segment.Heavy).
	heavy []int32
}

// setHeavy lists slot among the heavy rows (on) or takes it off.
func (d *domainIndex) setHeavy(slot int32, on bool) {
	i, found := slices.BinarySearch(d.heavy, slot)
	switch {
	case on && !found:
		d.heavy = slices.Insert(d.heavy, i, slot)
	case !on && found:
		d.heavy = slices.Delete(d.heavy, i, i+1)
	}
}

// arenaBlock is up to arenaRows contiguous rows and their codes. Its rows
// are in memory (vecs) or, in a large state, on disk (disk; spill.go).
type arenaBlock struct {
	vecs  []float32
	disk  *diskBlock
	codes *vecmath.Codes // nil while the domain keeps no codes
}

// arenaRows is the rows of a block. A block grows up to that size
// (appendRow) and the next one starts. So a large domain never copies more
// than a block to grow (one contiguous arena was copied, and its fresh
// pages faulted in, every eighth of growth: a sixth of a batched write's
// CPU at 250k atoms), and a search scans each block as one segment. A
// variable so tests can exercise many blocks on small data.
var arenaRows = 8192

// codedRows is the size from which a domain keeps codes and is searched
// through them: below it an exact scan is about as fast (a quantised search
// costs tens of microseconds whatever the size). A variable so tests can
// exercise the quantised path on small data.
var codedRows = 1024

func (d *domainIndex) empty() bool { return len(d.rows) == 0 && d.secrets == 0 }

// rowTo returns row i's vector: the block's memory, or buf (at least dim
// long) filled from disk.
func (d *domainIndex) rowTo(i, dim int, buf []float32) []float32 {
	b := &d.blocks[i/arenaRows]
	j := i % arenaRows
	if b.disk != nil {
		buf = buf[:dim]
		b.disk.ReadRow(j, buf)
		return buf
	}
	return b.vecs[j*dim : (j+1)*dim]
}

// vecTo is rowTo of a's row.
func (d *domainIndex) vecTo(a *Atom, dim int, buf []float32) []float32 {
	return d.rowTo(int(a.slot), dim, buf)
}

// memVec is a's row if it is in memory, nil if it is on disk.
func (d *domainIndex) memVec(a *Atom, dim int) []float32 {
	if d.blocks[int(a.slot)/arenaRows].disk != nil {
		return nil
	}
	return d.rowTo(int(a.slot), dim, nil)
}

// ownVec is a's row: its memory, or a copy read from disk.
func (d *domainIndex) ownVec(a *Atom, dim int) []float32 {
	if v := d.memVec(a, dim); v != nil {
		return v
	}
	return d.vecTo(a, dim, make([]float32, dim))
}

// blockRows is the number of rows in block k.
func (d *domainIndex) blockRows(k int) int { return min(len(d.rows)-k*arenaRows, arenaRows) }

// coded reports whether searches of the domain go through its codes.
func (d *domainIndex) coded() bool { return len(d.rows) >= codedRows }

// hasCodes reports whether the domain keeps codes (every block or none).
func (d *domainIndex) hasCodes() bool { return len(d.blocks) > 0 && d.blocks[0].codes != nil }

// segments appends the domain's blocks as search segments, in row order:
// segment k holds rows k·arenaRows onwards.
func (d *domainIndex) segments(segs []vecmath.Segment) []vecmath.Segment {
	for k := range d.blocks {
		b := &d.blocks[k]
		sg := vecmath.Segment{Arena: b.vecs, Rows: d.blockRows(k), Codes: b.codes}
		if b.disk != nil {
			sg.Reader = b.disk
		}
		segs = append(segs, sg)
	}
	return segs
}

// dotAll writes the dot product of vec with every row to scores. Domains
// searched without codes use it, and their rows are in memory (blocks go to
// disk in coded domains only); a block on disk is read whole.
func (d *domainIndex) dotAll(vec []float32, dim int, scores []float32) {
	for k := range d.blocks {
		from, n := k*arenaRows, d.blockRows(k)
		vecs := d.blocks[k].vecs
		if b := d.blocks[k].disk; b != nil {
			vecs = b.rows(n)
		}
		vecmath.DotArena(vec, vecs, dim, scores[from:from+n])
	}
}

// add appends a's row; rc, when not nil, is vec's codes encoded ahead
// (batchGate.encode), stored as they are when the block keeps codes.
func (d *domainIndex) add(a *Atom, vec []float32, rc *vecmath.RowCode) {
	k := d.addRow(a, vec)
	b := &d.blocks[k]
	switch {
	case b.codes != nil:
		if b.disk == nil {
			b.codes.Reserve(cap(b.vecs) / len(vec)) // grows with the rows
		}
		if rc != nil {
			b.codes.AppendCode(rc)
		} else {
			b.codes.Append(vec)
		}
	case d.coded():
		d.encodeAll(len(vec))
	}
	if d.vs.spilling && !d.vs.sweep && b.disk == nil && d.coded() {
		d.spill(k, len(vec)) // while a sweep is on, it moves the block
	}
}

// addRow appends a's row to the last block (a new one when it is full) and
// returns that block's index; the caller keeps its codes, and moves the
// block to disk when the state spills (add, or the blockCoder in a
// restore).
func (d *domainIndex) addRow(a *Atom, vec []float32) int {
	i, k := d.addAtom(a, len(vec))
	b := &d.blocks[k]
	if b.disk != nil {
		b.disk.write(i%arenaRows, vec)
	} else {
		b.vecs = appendRow(b.vecs, vec)
	}
	d.vs.counted(1)
	return k
}

// addAtom gives a the domain's next slot i, in block k (a new one when the
// last is full), all of addRow but its vector and count.
func (d *domainIndex) addAtom(a *Atom, dim int) (i, k int) {
	i = len(d.rows)
	a.slot = int32(i)
	d.rows = append(d.rows, a)
	d.sigs = append(d.sigs, metaSig(a.Metadata))
	if a.Valence > 0 {
		d.heavy = append(d.heavy, a.slot) // the last slot: still ascending
	}
	k = i / arenaRows
	if k == len(d.blocks) {
		d.blocks = append(d.blocks, d.newBlock(dim))
	}
	return i, k
}

// newBlock returns an empty block to follow the last, with codes when the
// domain keeps them.
func (d *domainIndex) newBlock(dim int) arenaBlock {
	var b arenaBlock
	if len(d.blocks) > 0 && d.hasCodes() {
		b.codes = vecmath.NewCodes(quantizer(dim))
	}
	return b
}

// encodeAll gives every block the codes of its rows.
func (d *domainIndex) encodeAll(dim int) {
	for k := range d.blocks {
		d.blocks[k].encode(d.blockRows(k), dim, false)
	}
}

// encode gives the block the codes of its n rows, with room for as many
// as its rows have unless tight (a block about to go to disk).
func (b *arenaBlock) encode(n, dim int, tight bool) {
	vecs := b.vecs
	if b.disk != nil {
		vecs = b.disk.rows(n)
	}
	b.codes = vecmath.NewCodes(quantizer(dim))
	if tight {
		b.codes.Reserve(n)
	} else {
		b.codes.Reserve(max(n, cap(b.vecs)/dim))
	}
	for j := range n {
		b.codes.Append(vecs[j*dim : (j+1)*dim])
	}
}

// encodeCoded gives codes to the blocks still without them of the domains
// searched through them, spread over the cores: restore adds rows without
// codes (addRow), and its blockCoder encodes only the blocks that filled.
// When the state spills, the blocks go to disk next (spillAll), so their
// codes get no room for rows to come: a block started whole (blockCoder)
// would keep codes for a whole block.
// Codes are a function of the rows, so the order the blocks are encoded in
// does not matter.
func encodeCoded(doms map[string]*domainIndex, dim int) {
	type job struct {
		b     *arenaBlock
		n     int
		tight bool
	}
	var jobs []job
	for _, d := range doms {
		if !d.coded() {
			continue
		}
		for k := range d.blocks {
			if d.blocks[k].codes == nil {
				jobs = append(jobs, job{&d.blocks[k], d.blockRows(k), d.vs.spilling})
			}
		}
	}
	fanout(len(jobs), func(i int) { jobs[i].b.encode(jobs[i].n, dim, jobs[i].tight) })
}

// appendRow appends vec to a block's rows. A block doubles until it can
// hold a whole block (arenaRows rows of vec's length, 12 MiB at d=384):
// growing by small steps copied it (and faulted in fresh pages) a dozen
// times on its way to full, a sixth of a batched write's CPU; allocating it
// whole left up to 12 MiB unused in every domain's last block.
func appendRow(arena, vec []float32) []float32 {
	if n := len(arena) + len(vec); n > cap(arena) {
		arena = grownRows(arena, n, len(vec))
	}
	return append(arena, vec...)
}

// grownRows returns a copy of a block's rows (of dim floats) with room for
// n floats, grown as appendRow grows it.
func grownRows(arena []float32, n, dim int) []float32 {
	grown := make([]float32, len(arena), max(n, min(2*cap(arena), arenaRows*dim)))
	copy(grown, arena)
	return grown
}

// remove swap-removes a's row; the last row moves into its slot.
func (d *domainIndex) remove(a *Atom, dim int) {
	if d.shared {
		d.unshare(dim)
	}
	last := len(d.rows) - 1
	slot := int(a.slot)
	if a.Valence > 0 {
		d.setHeavy(a.slot, false)
	}
	if slot != last {
		moved := d.rows[last]
		if moved.Valence > 0 {
			d.setHeavy(int32(last), false)
			d.setHeavy(a.slot, true)
		}
		row := d.ownVec(moved, dim)
		d.setRow(slot, dim, row)
		d.rows[slot] = moved
		d.sigs[slot] = d.sigs[last]
		moved.slot = a.slot
		if b := &d.blocks[slot/arenaRows]; b.codes != nil {
			if slot/arenaRows == last/arenaRows {
				b.codes.Move(slot%arenaRows, last%arenaRows)
			} else {
				b.codes.Set(slot%arenaRows, row) // a function of the row
			}
		}
	}
	lb := &d.blocks[last/arenaRows]
	if lb.disk == nil {
		lb.vecs = lb.vecs[:(last%arenaRows)*dim]
	}
	if lb.codes != nil {
		lb.codes.Truncate(last % arenaRows)
	}
	if last%arenaRows == 0 && last > 0 {
		lb.free()
		d.blocks[len(d.blocks)-1] = arenaBlock{}
		d.blocks = d.blocks[:len(d.blocks)-1] // its last row left
	}
	d.vs.counted(-1)
	if d.hasCodes() && last < codedRows/4 {
		for k := range d.blocks {
			d.blocks[k].codes = nil // small again: the memory is worth more
		}
	}
	d.rows[last] = nil
	d.rows, d.sigs = d.rows[:last], d.sigs[:last]
	a.slot = -1
	if !d.coded() {
		d.load(dim) // searched without codes again: rows in memory
	}
}

// clear removes every row at once, as removing them one by one would
// leave the domain (remove), but with no blocks: the state of a domain
// that only ever had secrets, as a restore rebuilds it. A snapshot holding
// on to the rows keeps them (the blocks are no longer written; an extent
// on disk is retired until the snapshot is done, vecFile.release).
func (d *domainIndex) clear() {
	for k := range d.blocks {
		d.blocks[k].free()
	}
	for _, a := range d.rows {
		a.slot = -1
	}
	d.vs.counted(-len(d.rows))
	d.blocks, d.rows, d.sigs, d.heavy, d.shared = nil, nil, nil, nil, false
}

// setRow overwrites row i with row.
func (d *domainIndex) setRow(i, dim int, row []float32) {
	b := &d.blocks[i/arenaRows]
	j := i % arenaRows
	if b.disk != nil {
		b.disk.write(j, row)
		return
	}
	copy(b.vecs[j*dim:(j+1)*dim], row)
}

// unshare gives the domain blocks of its own once a snapshot holds on to
// them (freeze): rows in memory are copied, blocks on disk move to fresh
// extents (the snapshot's stay until it is done, vecFile.pin).
func (d *domainIndex) unshare(dim int) {
	d.shared = false
	if !d.vs.open.any() {
		return // the snapshots that held them are written: nothing to copy
	}
	for k := range d.blocks {
		b := &d.blocks[k]
		if b.disk == nil {
			b.vecs = slices.Clone(b.vecs)
			continue
		}
		vecs := b.disk.rows(d.blockRows(k))
		old := b.disk
		b.disk = old.file.block(dim)
		b.disk.write(0, vecs)
		old.free()
	}
	d.shared = false
}
