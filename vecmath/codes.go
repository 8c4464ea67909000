package vecmath

import (
	"fmt"
	"math"
	"slices"
)

// blockRows is how many rows share one block of 1-bit codes: the scan
// kernel looks up 32 rows with one 32-byte shuffle.
const blockRows = 32

// Codes holds compact codes of an arena's rows, row i encoding row i:
//
//   - 1 bit per rotated coordinate (its sign), laid out in blocks of 32 rows
//     so the scan kernel reads them as 4-bit lookups ("fast scan");
//   - 4 bits per rotated coordinate (round(x/scale) in [-7, 7]), row-major;
//   - per row, the factors the two estimators and their error bounds need.
//
// With d = PaddedDim that is d/8 + d/2 + 16 bytes a row (256 at d = 384,
// a sixth of the float32 row). Codes are derived state: a function of each
// row's vector alone, so they never depend on row order or history, and they
// can be rebuilt from the arena at any time.
//
// A Codes value is not safe for concurrent mutation; concurrent reads
// (Search) are safe.
type Codes struct {
	q    *Quantizer
	n    int
	bits []byte // blocks of 32 rows x pdim/8 bytes
	nib  []byte // pdim/2 bytes a row
	// Per-row factors of the estimators (see encode); c1 and sd1 are read
	// by the scan kernel a block at a time, so their length is a multiple
	// of 32 (rows past n hold zeros).
	c1  []float32 // |r|^2 / |r|_1: the 1-bit estimate is c1 * sum(sign(r_j) * q_j)
	sd1 []float32 // deviation of the 1-bit estimate for a unit query, times |r|
	s4  []float32 // int4 step
	nrm []float32 // |r|; +Inf marks an exact-only row
	// inexact counts exact-only rows: rows whose rotation is not finite.
	inexact int
	row     RowCode // scratch of encode
}

// exactOnly reports whether row i must always be evaluated exactly.
func (c *Codes) exactOnly(i int) bool { return !(c.nrm[i] <= math.MaxFloat32) }

// NewCodes returns empty codes for rows of q's dimension.
func NewCodes(q *Quantizer) *Codes {
	return &Codes{q: q}
}

// Len is the number of rows encoded.
func (c *Codes) Len() int { return c.n }

// Quantizer returns the quantizer the codes were made with.
func (c *Codes) Quantizer() *Quantizer { return c.q }

// Bytes is the memory the codes hold (capacity included).
func (c *Codes) Bytes() int {
	return cap(c.bits) + cap(c.nib) + 4*(cap(c.c1)+cap(c.sd1)+cap(c.s4)+cap(c.nrm)) +
		cap(c.row.bits) + cap(c.row.nib)
}

func (c *Codes) blockBytes() int { return blockRows * c.q.pdim / 8 }
func (c *Codes) nibBytes() int   { return c.q.pdim / 2 }

// Reserve makes room for rows rows in all, so the Appends up to them do
// not regrow the codes (regrowing copies them a handful of times on the way
// to a full arena block).
func (c *Codes) Reserve(rows int) {
	if rows <= c.n {
		return
	}
	blocks := (rows + blockRows - 1) / blockRows
	c.bits = slices.Grow(c.bits, blocks*c.blockBytes()-len(c.bits))
	c.c1 = slices.Grow(c.c1, blocks*blockRows-len(c.c1))
	c.sd1 = slices.Grow(c.sd1, blocks*blockRows-len(c.sd1))
	c.nib = slices.Grow(c.nib, rows*c.nibBytes()-len(c.nib))
	c.s4 = slices.Grow(c.s4, rows-len(c.s4))
	c.nrm = slices.Grow(c.nrm, rows-len(c.nrm))
}

// Grown returns c with room for rows rows, as Reserve would make it,
// leaving c itself unchanged: c may be read meanwhile, and the result
// replaces it once no one else changes c.
func (c *Codes) Grown(rows int) *Codes {
	g := *c
	g.Reserve(rows)
	return &g
}

// Clipped returns c's codes in memory holding no room beyond its rows,
// for codes reserved for more rows than came.
func (c *Codes) Clipped() *Codes {
	return &Codes{q: c.q, n: c.n, inexact: c.inexact,
		bits: slices.Clip(slices.Clone(c.bits)), nib: slices.Clip(slices.Clone(c.nib)),
		c1: slices.Clip(slices.Clone(c.c1)), sd1: slices.Clip(slices.Clone(c.sd1)),
		s4: slices.Clip(slices.Clone(c.s4)), nrm: slices.Clip(slices.Clone(c.nrm))}
}

// Append encodes vec (length Dim) as row Len().
func (c *Codes) Append(vec []float32) {
	if len(vec) != c.q.dim {
		panic(fmt.Sprintf("vecmath: vector length %d != dim %d", len(vec), c.q.dim))
	}
	c.grow1()
	c.encode(c.n-1, vec)
}

// grow1 adds a row of zero codes.
func (c *Codes) grow1() {
	if c.n%blockRows == 0 {
		c.bits = append(c.bits, make([]byte, c.blockBytes())...)
		c.c1 = append(c.c1, make([]float32, blockRows)...)
		c.sd1 = append(c.sd1, make([]float32, blockRows)...)
	}
	c.nib = append(c.nib, make([]byte, c.nibBytes())...)
	c.s4 = append(c.s4, 0)
	c.nrm = append(c.nrm, 0)
	c.n++
}

// Set re-encodes row i from vec.
func (c *Codes) Set(i int, vec []float32) {
	c.check(i)
	c.encode(i, vec)
}

// Move copies the codes of row src over row dst (the arena's swap-remove
// moves its last row the same way before truncating).
func (c *Codes) Move(dst, src int) {
	c.check(dst)
	c.check(src)
	if dst == src {
		return
	}
	pairs := c.q.pdim / 8
	db, dr := c.bitsAt(dst)
	sb, sr := c.bitsAt(src)
	for m := range pairs {
		db[32*m+dr] = sb[32*m+sr]
	}
	nb := c.nibBytes()
	copy(c.nib[dst*nb:(dst+1)*nb], c.nib[src*nb:(src+1)*nb])
	if c.exactOnly(dst) {
		c.inexact--
	}
	if c.exactOnly(src) {
		c.inexact++
	}
	c.c1[dst], c.sd1[dst], c.s4[dst], c.nrm[dst] = c.c1[src], c.sd1[src], c.s4[src], c.nrm[src]
}

// Truncate keeps rows [0, n).
func (c *Codes) Truncate(n int) {
	if n < 0 || n > c.n {
		panic(fmt.Sprintf("vecmath: truncate %d codes to %d", c.n, n))
	}
	for i := n; i < c.n; i++ {
		if c.exactOnly(i) {
			c.inexact--
		}
	}
	// Clear the dropped rows of the last kept block, so a block's bytes are
	// always a function of its live rows.
	for i := n; i < c.n && i%blockRows != 0; i++ {
		b, r := c.bitsAt(i)
		for m := range c.q.pdim / 8 {
			b[32*m+r] = 0
		}
		c.c1[i], c.sd1[i] = 0, 0
	}
	c.n = n
	blocks := (n + blockRows - 1) / blockRows
	c.bits = c.bits[:blocks*c.blockBytes()]
	c.c1 = c.c1[:blocks*blockRows]
	c.sd1 = c.sd1[:blocks*blockRows]
	c.nib = c.nib[:n*c.nibBytes()]
	c.s4 = c.s4[:n]
	c.nrm = c.nrm[:n]
}

func (c *Codes) check(i int) {
	if i < 0 || i >= c.n {
		panic(fmt.Sprintf("vecmath: code row %d outside [0, %d)", i, c.n))
	}
}

// bitsAt returns the block holding row i and i's position in it.
func (c *Codes) bitsAt(i int) ([]byte, int) {
	bb := c.blockBytes()
	b := i / blockRows
	return c.bits[b*bb : (b+1)*bb], i % blockRows
}

// encode writes row i's codes. A row whose rotation is not finite (it holds
// NaN or ±Inf, or overflows) is marked exact-only (nrm = +Inf): searches
// always evaluate it exactly, so it behaves as in an exact scan.
func (c *Codes) encode(i int, vec []float32) {
	c.q.EncodeRow(vec, &c.row)
	c.put(i, &c.row)
}

// RowCode is one row's codes apart from any Codes, made ahead of time
// (Quantizer.EncodeRow) and stored by Codes.AppendCode: what Append would
// write, so the encoding can run where the Codes may not change (a batched
// write encodes its rows beside its gates, under a read lock). EncodeRow
// reuses its slices when they have room.
type RowCode struct {
	bits             []byte // the sign byte of each pair of nibble positions
	nib              []byte // the int4 codes
	c1, sd1, s4, nrm float32
}

// RowCodeBytes is the size of a row code's two slices, which RowCodeIn
// places in a caller's memory.
func (q *Quantizer) RowCodeBytes() int { return q.pdim/8 + q.pdim/2 }

// RowCodeIn returns a row code whose slices are mem (RowCodeBytes long).
func (q *Quantizer) RowCodeIn(mem []byte) RowCode {
	d := q.pdim
	return RowCode{bits: mem[: d/8 : d/8], nib: mem[d/8 : d/8+d/2 : d/8+d/2]}
}

// rowScratch holds a rotation's buffers for EncodeRow.
type rowScratch struct{ rot, tmp []float32 }

// EncodeRow encodes vec (length Dim) into rc, as Append encodes a row. It
// is safe for concurrent use (with distinct rc).
func (q *Quantizer) EncodeRow(vec []float32, rc *RowCode) {
	if len(vec) != q.dim {
		panic(fmt.Sprintf("vecmath: vector length %d != dim %d", len(vec), q.dim))
	}
	sc, _ := q.scratch.Get().(*rowScratch)
	if sc == nil {
		sc = &rowScratch{make([]float32, q.pdim), make([]float32, q.pdim)}
	}
	defer q.scratch.Put(sc)
	d := q.pdim
	rc.bits, rc.nib = grow(rc.bits, d/8), grow(rc.nib, d/2)
	r := sc.rot
	q.rotate(vec, r, sc.tmp)
	var ss, l1 float64
	for _, x := range r {
		ss += float64(x) * float64(x)
		l1 += math.Abs(float64(x))
	}
	rc.c1, rc.sd1, rc.s4, rc.nrm = 0, 0, 0, 0
	clear(rc.bits)
	clear(rc.nib)
	switch {
	case math.IsNaN(ss) || math.IsInf(ss, 0):
		rc.nrm = float32(math.Inf(1))
		return
	case l1 == 0:
		return // the zero row: every estimate is exactly 0
	}
	nrm := math.Sqrt(ss)
	// <obar, o>: how well the sign vector aligns with the row (RaBitQ).
	ob := min(l1/(math.Sqrt(float64(d))*nrm), 1)
	rc.c1 = float32(ss / l1)
	rc.sd1 = float32(math.Sqrt((1-ob*ob)/(ob*ob)/float64(d-1)) * nrm)
	rc.nrm = float32(nrm)
	// Sign bits: bit t of the nibble of position p is coordinate 4p+t.
	for m := range d / 8 {
		var b uint64
		for t := range 8 {
			b |= nonNegative(r[8*m+t]) << t
		}
		rc.bits[m] = byte(b)
	}
	// int4: per 64 coordinates, byte i holds coordinate i (low nibble) and
	// i+32 (high nibble), each stored as k+7 for k in [-7, 7].
	s4 := maxAbs(r) / int4Max
	rc.s4 = s4
	for ch := range d / 64 {
		for i := range 32 {
			lo := int4Code(r[64*ch+i], s4)
			hi := int4Code(r[64*ch+32+i], s4)
			rc.nib[32*ch+i] = lo | hi<<4
		}
	}
}

// AppendCode stores rc, which EncodeRow made with c's quantizer, as row
// Len(): the same codes Append would write for the row.
func (c *Codes) AppendCode(rc *RowCode) {
	if len(rc.bits) != c.q.pdim/8 || len(rc.nib) != c.nibBytes() {
		panic(fmt.Sprintf("vecmath: a row code of %d dimensions for codes of %d", 8*len(rc.bits), c.q.pdim))
	}
	c.grow1()
	c.put(c.n-1, rc)
}

// put writes rc as row i's codes.
func (c *Codes) put(i int, rc *RowCode) {
	if c.exactOnly(i) {
		c.inexact--
	}
	block, pos := c.bitsAt(i)
	for m, b := range rc.bits {
		block[32*m+pos] = b
	}
	copy(c.nib[i*c.nibBytes():(i+1)*c.nibBytes()], rc.nib)
	c.c1[i], c.sd1[i], c.s4[i], c.nrm[i] = rc.c1, rc.sd1, rc.s4, rc.nrm
	if c.exactOnly(i) {
		c.inexact++
	}
}

// nonNegative is 1 when x >= 0 and 0 otherwise, for x not NaN, without a
// branch: the signs of a row are random, and a branch on each mispredicted
// half the time (a third of encoding a row). The bits of x are at most
// 0x80000000 (-0) exactly when x >= 0.
func nonNegative(x float32) uint64 {
	return (uint64(math.Float32bits(x)) - 0x80000001) >> 63
}

func int4Code(x, step float32) byte {
	return byte(max(-int4Max, min(int4Max, roundHalfAway(x/step))) + int4Max)
}
