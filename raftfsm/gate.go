package raftfsm

import (
	"math"
	"runtime"

	"github.com/hebbdb/hebb/vecmath"
)

// duplicateCos is the write gate's refusal threshold: the embedder cannot
// tell two texts apart (DESIGN.md §4).
const duplicateCos = 1 - 1e-6

// gateRecheck is how many SIMD-ranked rows the exact gate re-scores with
// the reference kernel.
const gateRecheck = 8

// gate finds the nearest live tip of a domain to a write's vector (the
// write gate, DESIGN.md §4). Its scratch (searcher, scores, options and
// their weight callback) lives from one gate to the next; one goroutine
// uses a gate at a time, and gates come from the pool of their dimension
// (getGate, putGate).
type gate struct {
	dim    int
	s      *vecmath.Searcher
	opt    vecmath.SearchOptions
	segs   []vecmath.Segment // the domain's blocks
	scores []float32
	top    []int
	row    []float32 // a row read from disk
	// the search under way
	d       *domainIndex
	targets []*Atom
}

func getGate(dim int) *gate {
	c := codingFor(dim)
	if g, ok := c.gates.Get().(*gate); ok {
		return g
	}
	g := &gate{dim: dim, s: vecmath.NewSearcher(c.q)}
	g.opt = vecmath.SearchOptions{K: 1, Floor: noFloor, Exact: vecmath.DotFixed, MinWeight: 1, MaxWeight: 1}
	return g
}

func putGate(g *gate) { codingFor(g.dim).gates.Put(g) }

// skip reports whether row i of the domain under search is no live tip:
// superseded, or one of the targets this write supersedes.
func (g *gate) skip(i int) bool {
	a := g.d.rows[i]
	if a.Superseded() {
		return true
	}
	for _, tg := range g.targets {
		if tg == a {
			return true
		}
	}
	return false
}

func (g *gate) weight(seg, row int) (float32, bool) { return 1, !g.skip(seg*arenaRows + row) }

// nearest returns the row of d nearest to vec (its reference-kernel
// cosine; the lowest ID among equals), skipping superseded rows and the
// targets; nil when there is none. split lets a large domain's search
// spread over cores.
func (g *gate) nearest(d *domainIndex, vec []float32, targets []*Atom, split bool) (*Atom, float32) {
	if d == nil || len(d.rows) == 0 {
		return nil, 0
	}
	g.d, g.targets = d, targets
	var best *Atom
	var cos float32
	if d.coded() {
		best, cos = g.coded(vec, split)
	} else {
		best, cos = g.exact(vec)
	}
	g.d, g.targets = nil, nil
	return best, cos
}

// rowBuf is the gate's buffer of one row.
func (g *gate) rowBuf() []float32 {
	if len(g.row) != g.dim {
		g.row = make([]float32, g.dim)
	}
	return g.row
}

// coded is the gate's search through the domain's codes: the quantised
// search with DotFixed as its exact kernel, so every replica, whatever its
// CPU, finds the same row and the same cosine. It finds the nearest row
// unless an estimate misses its bound (vecmath doc), and then every replica
// misses it alike: the codes are a function of the rows.
func (g *gate) coded(vec []float32, split bool) (*Atom, float32) {
	d := g.d
	g.segs = d.segments(g.segs[:0])
	g.opt.Fanout = nil
	if split && len(d.rows) >= parallelRows && runtime.GOMAXPROCS(0) > 1 {
		g.opt.Fanout = fanout
	}
	// Most nearest rows are live tips: search every row first, reading no
	// atom; only when a best row is skipped, search again weighing each
	// row it evaluates. The live rows' best is the rows' best when that one
	// is live, so both give what the weighted search alone gives.
	g.opt.Weight = nil
	best, cos, ok := g.best(g.s.Search(vec, g.segs, &g.opt))
	if !ok {
		g.opt.Weight = g.weight
		best, cos, _ = g.best(g.s.Search(vec, g.segs, &g.opt))
	}
	clear(g.segs) // no arena stays reachable from the pool
	return best, cos
}

// best picks the lowest ID among the hits (they tie at the best cosine),
// as exact does; ok is false when a hit is a row the gate skips.
func (g *gate) best(hits []vecmath.Hit) (best *Atom, cos float32, ok bool) {
	for _, h := range hits {
		i := h.Seg*arenaRows + h.Row
		if g.opt.Weight == nil && g.skip(i) {
			return nil, 0, false
		}
		if a := g.d.rows[i]; best == nil || compareID(a.ID, best.ID) < 0 {
			best, cos = a, h.Sim
		}
	}
	return best, cos, true
}

// exact scans the domain: SIMD ranks the rows; the best gateRecheck live
// ones are then re-scored with DotFixed, which sums identically on every
// CPU, so replicas agree on the stored importance and the gate's
// verdict (SIMD and scalar dot products differ only in the last bits, far
// below the candidates' gap). Only the rows ranked ahead of the
// gateRecheck-th live one are checked for liveness.
func (g *gate) exact(vec []float32) (*Atom, float32) {
	d := g.d
	if cap(g.scores) < len(d.rows) {
		g.scores = make([]float32, len(d.rows))
	}
	scores := g.scores[:len(d.rows)]
	d.dotAll(vec, g.dim, scores)
	var best *Atom
	cos := float32(math.Inf(-1))
	for k := gateRecheck; ; k *= 4 {
		// TopK orders by score, then row: the first gateRecheck live rows
		// of its answer are those of the live rows alone.
		g.top = vecmath.TopK(scores, k, g.top[:0])
		live := 0
		for _, i := range g.top {
			if live == gateRecheck {
				break
			}
			if g.skip(i) {
				continue
			}
			live++
			a := d.rows[i]
			c := vecmath.DotFixed(vec, d.vecTo(a, g.dim, g.rowBuf()))
			if c > cos || c == cos && compareID(a.ID, best.ID) < 0 {
				best, cos = a, c
			}
		}
		if live == gateRecheck || len(g.top) < k {
			break
		}
		best, cos = nil, float32(math.Inf(-1))
	}
	if best == nil {
		return nil, 0
	}
	return best, cos
}
