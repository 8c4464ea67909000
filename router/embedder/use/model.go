package use

import (
	"math"
	"sync"

	"github.com/hebbdb/hebb/vecmath"
)

// model is the tokenizer, the table and the projection: the semantic part
// of the builtin embedder. It is read-only once loaded.
type model struct {
	tok   *Tokenizer
	table *table
	proj  *projection
	pool  sync.Pool // of *scratch
}

// scratch holds the buffers of one embedding, reused through the pool.
type scratch struct {
	tok       tokScratch
	acc, full []float32 // table.dim
}

func (m *model) scratch() *scratch {
	if s, ok := m.pool.Get().(*scratch); ok {
		return s
	}
	return &scratch{acc: make([]float32, m.table.dim), full: make([]float32, m.table.dim)}
}

// dim is the length of the semantic vectors embed writes.
func (m *model) dim() int { return m.proj.out }

// embed writes the semantic unit vector of text into vec (length m.dim()):
// the table's vector (embedTable), projected.
func (m *model) embed(text string, vec []float32, s *scratch) {
	m.embedTable(text, s.full, s)
	m.proj.apply(s.full, s.acc, vec)
}

// embedTable writes the semantic unit vector of text into vec (length
// table.dim): tanh of the bias plus the mean of the text's piece rows, L2
// normalised. The model reads at most 128 pieces; the table has no window
// and averages every piece of a longer text. A text without pieces gets
// tanh(bias), normalised, like the model's empty input.
func (m *model) embedTable(text string, vec []float32, s *scratch) {
	ids := m.tok.encode(text, &s.tok)
	acc := s.acc
	clear(acc)
	t := m.table
	for _, id := range ids {
		addRow(acc, t.rows[int(id)*t.dim:(int(id)+1)*t.dim], t.scale[id])
	}
	inv := float32(1)
	if len(ids) > 0 {
		inv = 1 / float32(len(ids))
	}
	var ss float64
	for k, a := range acc {
		v := float32(math.Tanh(float64(float32(a*inv) + t.bias[k])))
		vec[k] = v
		ss += float64(float64(v) * float64(v)) // no fused multiply-add
	}
	scaleToUnit(vec, ss)
}

// scaleToUnit scales vec, whose squared norm is ss, to unit length; a zero
// vector becomes the first unit vector.
func scaleToUnit(vec []float32, ss float64) {
	if ss == 0 {
		clear(vec)
		vec[0] = 1
		return
	}
	norm := float32(1 / math.Sqrt(ss))
	for k := range vec {
		vec[k] *= norm
	}
}

// addRow adds scale times the int8 row to acc. Each product is rounded to
// float32 before the sum (no fused multiply-add), so every architecture
// computes the same bits; vecmath.AddScaledInt8 does eight at once.
func addRow(acc []float32, row []int8, scale float32) {
	vecmath.AddScaledInt8(acc, row, scale)
}
