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
// restore rebuilds them once the rows are back (encodeCoded).
type domainIndex struct {
	name    string // the domain's name; its atoms share this string
	blocks  []arenaBlock
	rows    []*Atom
	secrets int
	// shared is set when a snapshot holds on to the blocks' rows (freeze):
	// the next write that would overwrite a row copies the blocks first.
	shared bool
}

// arenaBlock is up to arenaRows contiguous rows and their codes.
type arenaBlock struct {
	vecs  []float32
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

// row is row i's vector.
func (d *domainIndex) row(i, dim int) []float32 {
	j := i % arenaRows
	return d.blocks[i/arenaRows].vecs[j*dim : (j+1)*dim]
}

func (d *domainIndex) vec(a *Atom, dim int) []float32 { return d.row(int(a.slot), dim) }

// coded reports whether searches of the domain go through its codes.
func (d *domainIndex) coded() bool { return len(d.rows) >= codedRows }

// hasCodes reports whether the domain keeps codes (every block or none).
func (d *domainIndex) hasCodes() bool { return len(d.blocks) > 0 && d.blocks[0].codes != nil }

// segments appends the domain's blocks as search segments, in row order:
// segment k holds rows k·arenaRows onwards.
func (d *domainIndex) segments(segs []vecmath.Segment) []vecmath.Segment {
	for k := range d.blocks {
		b := &d.blocks[k]
		segs = append(segs, vecmath.Segment{Arena: b.vecs, Rows: min(len(d.rows)-k*arenaRows, arenaRows), Codes: b.codes})
	}
	return segs
}

// dotAll writes the dot product of vec with every row to scores.
func (d *domainIndex) dotAll(vec []float32, dim int, scores []float32) {
	for k := range d.blocks {
		from := k * arenaRows
		vecmath.DotArena(vec, d.blocks[k].vecs, dim, scores[from:min(from+arenaRows, len(d.rows))])
	}
}

func (d *domainIndex) add(a *Atom, vec []float32) {
	b := d.addRow(a, vec)
	switch {
	case b.codes != nil:
		b.codes.Reserve(cap(b.vecs) / len(vec)) // grows with the rows
		b.codes.Append(vec)
	case d.coded():
		d.encodeAll(len(vec))
	}
}

// addRow appends a's row to the last block (a new one when it is full) and
// returns that block; the caller keeps its codes.
func (d *domainIndex) addRow(a *Atom, vec []float32) *arenaBlock {
	i := len(d.rows)
	a.slot = int32(i)
	d.rows = append(d.rows, a)
	k := i / arenaRows
	if k == len(d.blocks) {
		b := arenaBlock{}
		if k > 0 && d.hasCodes() {
			b.codes = vecmath.NewCodes(quantizer(len(vec)))
		}
		d.blocks = append(d.blocks, b)
	}
	b := &d.blocks[k]
	b.vecs = appendRow(b.vecs, vec)
	return b
}

// encodeAll gives every block the codes of its rows.
func (d *domainIndex) encodeAll(dim int) {
	for k := range d.blocks {
		d.blocks[k].encode(dim)
	}
}

// encode gives the block the codes of its rows.
func (b *arenaBlock) encode(dim int) {
	b.codes = vecmath.NewCodes(quantizer(dim))
	b.codes.Reserve(len(b.vecs) / dim)
	for j := range len(b.vecs) / dim {
		b.codes.Append(b.vecs[j*dim : (j+1)*dim])
	}
}

// encodeCoded gives codes to the blocks of the domains searched through
// them, spread over the cores: restore adds rows without codes (addRow),
// and encoding is most of a restore's work. Codes are a function of the
// rows, so the order the blocks are encoded in does not matter.
func encodeCoded(doms map[string]*domainIndex, dim int) {
	var blocks []*arenaBlock
	for _, d := range doms {
		if d.coded() && !d.hasCodes() {
			for k := range d.blocks {
				blocks = append(blocks, &d.blocks[k])
			}
		}
	}
	fanout(len(blocks), func(i int) { blocks[i].encode(dim) })
}

// appendRow appends vec to a block's rows. A block doubles until it can
// hold a whole block (arenaRows rows of vec's length, 12 MiB at d=384):
// growing by small steps copied it (and faulted in fresh pages) a dozen
// times on its way to full, a sixth of a batched write's CPU; allocating it
// whole left up to 12 MiB unused in every domain's last block.
func appendRow(arena, vec []float32) []float32 {
	if n := len(arena) + len(vec); n > cap(arena) {
		full := arenaRows * len(vec)
		grown := make([]float32, len(arena), max(n, min(2*cap(arena), full)))
		copy(grown, arena)
		arena = grown
	}
	return append(arena, vec...)
}

// remove swap-removes a's row; the last row moves into its slot.
func (d *domainIndex) remove(a *Atom, dim int) {
	if d.shared {
		for k := range d.blocks {
			d.blocks[k].vecs = slices.Clone(d.blocks[k].vecs)
		}
		d.shared = false
	}
	last := len(d.rows) - 1
	slot := int(a.slot)
	if slot != last {
		moved := d.rows[last]
		copy(d.row(slot, dim), d.row(last, dim))
		d.rows[slot] = moved
		moved.slot = a.slot
		if b := &d.blocks[slot/arenaRows]; b.codes != nil {
			if slot/arenaRows == last/arenaRows {
				b.codes.Move(slot%arenaRows, last%arenaRows)
			} else {
				b.codes.Set(slot%arenaRows, d.row(slot, dim)) // a function of the row
			}
		}
	}
	lb := &d.blocks[last/arenaRows]
	lb.vecs = lb.vecs[:(last%arenaRows)*dim]
	if lb.codes != nil {
		lb.codes.Truncate(last % arenaRows)
	}
	if last%arenaRows == 0 && last > 0 {
		d.blocks[len(d.blocks)-1] = arenaBlock{}
		d.blocks = d.blocks[:len(d.blocks)-1] // its last row left
	}
	if d.hasCodes() && last < codedRows/4 {
		for k := range d.blocks {
			d.blocks[k].codes = nil // small again: the memory is worth more
		}
	}
	d.rows[last] = nil
	d.rows = d.rows[:last]
	a.slot = -1
}
