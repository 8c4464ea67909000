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
