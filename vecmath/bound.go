package vecmath

import "math"

// Bounder bounds the dot products of one query with single rows of codes,
// through their 4-bit stage: a caller about to read a row kept outside
// memory (Segment.Reader) asks first whether its dot can matter. The bound
// holds unless an estimate misses it, which the bounds make improbable
// (doc.go, "Quantised search"). Use one per goroutine.
type Bounder struct {
	q     *Quantizer
	cq    *codeQuery
	ready bool
	row   [1]int32
	dot   [1]int32
	sink  byte // what UpperEach's loads read
}

// NewBounder returns a bounder of queries of q's dimension.
func NewBounder(q *Quantizer) *Bounder { return &Bounder{q: q, cq: newCodeQuery(q.pdim)} }

// Prepare makes vec the query; it panics unless vec has q's dimension.
func (b *Bounder) Prepare(vec []float32) {
	if len(vec) != b.q.dim {
		panic("vecmath: bounder query of the wrong dimension")
	}
	b.ready = b.cq.prepare(b.q, vec)
}

// Upper returns an upper bound of the query's dot with row of c: +Inf
// when there is none (a zero or non-finite query, a row kept exact only).
func (b *Bounder) Upper(c *Codes, row int) float32 {
	if !b.ready || c.q.pdim != b.q.pdim || c.exactOnly(row) {
		return float32(math.Inf(1))
	}
	b.row[0] = int32(row)
	DotInt4Rows(b.cq.q8, c.nib, b.row[:], b.dot[:])
	_, ub := b.cq.est4(b.dot[0], c.s4[row], c.nrm[row])
	return ub
}

// upperRun is how many rows UpperEach loads ahead of bounding them.
const upperRun = 16

// UpperEach sets out[i] to Upper(codes[i], rows[i]) for every i. Rows
// scattered over memory are each a few cache misses: it reads upperRun
// rows' bytes in a loop whose loads do not depend on each other, so the
// CPU fetches them in parallel, before it bounds them one by one.
func (b *Bounder) UpperEach(codes []*Codes, rows []int32, out []float32) {
	if len(rows) != len(codes) || len(out) < len(rows) {
		panic("vecmath: UpperEach lengths differ")
	}
	for from := 0; from < len(rows); from += upperRun {
		to := min(from+upperRun, len(rows))
		b.sink += touchRows(codes[from:to], rows[from:to])
		for i := from; i < to; i++ {
			out[i] = b.Upper(codes[i], int(rows[i]))
		}
	}
}

// touchRows reads one byte of every cache line of the rows' 4-bit codes
// and their factors; the sum only keeps the loads.
func touchRows(codes []*Codes, rows []int32) (sum byte) {
	for i, c := range codes {
		r := int(rows[i])
		nb := c.nibBytes()
		row := c.nib[r*nb : (r+1)*nb]
		for off := 0; off < len(row); off += 64 {
			sum += row[off]
		}
		sum += row[len(row)-1] // the row may start inside a line
		sum += byte(math.Float32bits(c.s4[r])) + byte(math.Float32bits(c.nrm[r]))
	}
	return sum
}
