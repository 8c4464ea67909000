package vecmath

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Segment is one arena a Searcher searches: Rows rows of the quantizer's
// dimension. Codes, when not nil, encodes exactly those rows; a segment
// without codes is scanned exactly. A segment whose rows are kept outside
// memory has a nil Arena and a Reader; it must have codes, since only the
// few rows a search evaluates exactly are read.
//
// Heavy lists, ascending, the rows whose weight may exceed the options'
// MaxWeight (up to HeavyWeight): a few boosted rows then do not widen every
// row's bound.
type Segment struct {
	Arena  []float32
	Reader RowReader
	Rows   int
	Codes  *Codes
	Heavy  []int32
}

// RowReader reads the rows of a segment kept outside memory.
type RowReader interface {
	// ReadRow copies row's vector into dst (the quantizer's dimension).
	ReadRow(row int, dst []float32)
}

// Hit is a row a search returns.
type Hit struct {
	Seg, Row int
	Sim      float32 // exact dot of the row with the query
	Score    float32 // Sim times the row's weight
}

// SearchOptions configure one search.
type SearchOptions struct {
	// K is how many best scores are wanted; K <= 0 returns nothing.
	K int
	// Weight says whether a row is eligible and, if it is, the factor its
	// Sim is multiplied by; every weight must lie in [MinWeight, MaxWeight],
	// 0 < MinWeight. A nil Weight makes every row eligible with weight 1.
	// It is called for few rows, one at a time.
	Weight               func(seg, row int) (float32, bool)
	MinWeight, MaxWeight float32
	// HeavyWeight bounds the weights of the segments' Heavy rows (at
	// least MaxWeight); unused when no segment lists any.
	HeavyWeight float32
	// Floor drops rows scoring below it (use -Inf for none); it also
	// prunes, so a high floor makes the search cheaper.
	Floor float32
	// Exact is the kernel of exact dots; nil means Dot. DotRef makes the
	// whole search bit-identical on every platform.
	Exact func(a, b []float32) float32
	// Fanout, when not nil, runs task(0..n-1), possibly in parallel, and
	// returns when all are done. Search uses it for its scans.
	Fanout func(n int, task func(i int))
	// Prune, when not nil, is asked once for the rows [from,
	// from+len(out)) of segment seg that one stage-1 task scans, on that
	// task's goroutine (so possibly for several tasks at once): it sets
	// out[i] (false on entry) when row from+i cannot be eligible, that is
	// when Weight would refuse it. Such rows are never refined, weighed or
	// evaluated. It suits a caller that can rule rows out in bulk far more
	// cheaply than Weight decides them one by one (a bit summary of each
	// row kept beside the rows): a filter few rows pass would otherwise
	// have the search refine and weigh row after row.
	Prune func(seg, from int, out []bool)
	// Scanned, when not nil, is called once the first stage (the scan of
	// every row, the part Fanout spreads) is done, on the search's
	// goroutine: work started then has the cores the scan no longer needs.
	// Searches that scan no codes call it before they evaluate rows.
	Scanned func()
}

// SearchStats counts the work of the last search.
type SearchStats struct {
	Rows      int     // rows of all segments
	Refined   int     // rows whose int4 estimate was computed
	Weighed   int     // rows whose weight was asked
	Exact     int     // exact dots
	Threshold float32 // the score every returned row had to reach
}

// Task sizes: 32-row blocks one stage-1 task scans (rows, for segments
// without codes), and rows one int4 task refines.
const (
	scanBlocks = 256
	refineRows = 4096
)

// Searcher runs quantised searches (see doc.go, "Quantised search") and
// holds their scratch memory; use one per goroutine.
type Searcher struct {
	q   *Quantizer
	cq  *codeQuery
	opt *SearchOptions
	vec []float32
	seg []Segment
	dot func(a, b []float32) float32

	off    []int     // first global row of each segment (multiples of 32)
	ub     []float32 // per global row: stage-1 upper bound; NaN once handled
	bmax   []float32 // per 32-row block of global rows: its largest upper bound
	raw    []uint16  // per global row: scan sums (portable kernel only)
	tasks  []task    // stage-1 tasks; the first ntasks are this search's
	ntasks int
	list   []int32   // rows being refined
	rows   []int32   // per listed row: its row in its segment
	segs   []int32   // per listed row: its segment
	dots   []int32   // per listed row: int4 dot
	e4, u4 []float32 // per listed row: int4 estimate and upper bound (NaN once evaluated)
	runs   []span
	top    []int
	order  []int
	scores []float32
	hits   []Hit
	buf    []float32 // a row read from a segment's reader
	stats  SearchStats
}

// task is one parallel unit of stage 1: rows [from, to) of a segment, from
// a multiple of 32; cand collects its candidates (global rows), and rows,
// dots, e4 and u4 their rows in the segment and int4 refinement.
type task struct {
	seg, from, to int
	cand, rows    []int32
	dots          []int32
	e4, u4        []float32
	pruned        []bool // Prune's answer for the task's rows
}

// span is a run [from, to) of listed rows of one segment.
type span struct{ seg, from, to int }

// NewSearcher returns a searcher of vectors of q's dimension.
func NewSearcher(q *Quantizer) *Searcher {
	return &Searcher{q: q, cq: newCodeQuery(q.pdim)}
}

// Stats returns the counters of the last search.
func (s *Searcher) Stats() SearchStats { return s.stats }

// Search returns the rows whose Score is among the K best of all eligible
// rows of the segments, ties at the K-th score included, by Score
// descending (ties by segment and row). Scores below Floor and NaN scores
// are never returned. The result aliases the searcher's memory until its
// next search.
//
// Rows of segments with codes are found through their codes: the result
// equals SearchRef's unless an estimate misses by more than its bound,
// which the bounds make improbable (doc.go). It panics if len(vec) is not
// the quantizer's dimension, a segment's arena is shorter than its rows or
// its codes do not match.
func (s *Searcher) Search(vec []float32, segs []Segment, opt *SearchOptions) []Hit {
	if !s.begin(vec, segs, opt) {
		return s.hits
	}
	if !s.cq.prepare(s.q, vec) {
		s.scanned()
		s.evalAll() // a zero or non-finite query
		return s.finish()
	}
	s.stage1()
	s.scanned()
	tau := max(s.seed(), opt.Floor)
	s.stats.Threshold = tau
	s.candidates(tau)
	s.admit(tau)
	return s.finish()
}

func (s *Searcher) scanned() {
	if s.opt.Scanned != nil {
		s.opt.Scanned()
	}
}

// SearchRef is the exact reference of Search: it evaluates every row
// exactly and returns what Search returns when no estimate misses its bound.
func (s *Searcher) SearchRef(vec []float32, segs []Segment, opt *SearchOptions) []Hit {
	if !s.begin(vec, segs, opt) {
		return s.hits
	}
	s.evalAll()
	return s.finish()
}

// begin resets the searcher for a search and checks its arguments; it
// returns false when there is nothing to search for.
func (s *Searcher) begin(vec []float32, segs []Segment, opt *SearchOptions) bool {
	s.stats = SearchStats{}
	s.hits = s.hits[:0]
	s.vec, s.seg, s.opt = vec, segs, opt
	s.dot = opt.Exact
	if s.dot == nil {
		s.dot = Dot
	}
	if len(vec) != s.q.dim {
		panic(fmt.Sprintf("vecmath: query length %d != dim %d", len(vec), s.q.dim))
	}
	s.off = s.off[:0]
	total := 0
	for i, sg := range segs {
		if sg.Reader == nil || sg.Arena != nil {
			checkArena(s.q.dim, len(sg.Arena), s.q.dim, sg.Rows)
		} else if sg.Codes == nil {
			panic(fmt.Sprintf("vecmath: segment %d has a reader and no codes", i))
		}
		if c := sg.Codes; c != nil && (c.n != sg.Rows || c.q.pdim != s.q.pdim) {
			panic(fmt.Sprintf("vecmath: segment %d has %d rows and %d codes", i, sg.Rows, c.n))
		}
		s.off = append(s.off, total)
		total += (sg.Rows + blockRows - 1) / blockRows * blockRows
		s.stats.Rows += sg.Rows
	}
	s.ub = grow(s.ub, total)
	s.bmax = grow(s.bmax, total/blockRows)
	return opt.K > 0
}

// grow returns b resized to n, its content kept.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return append(b[:cap(b)], make([]T, n-cap(b))...)[:n]
	}
	return b[:n]
}

// run runs f(0..n-1) through the fanout when there is one and n > 1.
func (s *Searcher) run(n int, f func(i int)) {
	if s.opt.Fanout != nil && n > 1 {
		s.opt.Fanout(n, f)
		return
	}
	for i := range n {
		f(i)
	}
}

// stage1 fills ub of every row (the upper bound of its 1-bit estimate; the
// exact dot for segments without codes; NaN for padding) and bmax of every
// block.
func (s *Searcher) stage1() {
	n := 0
	for i, sg := range s.seg {
		for from := 0; from < sg.Rows; from += scanBlocks * blockRows {
			if n == len(s.tasks) {
				s.tasks = append(s.tasks, task{})
			}
			// Reuse the task, and with it its candidate list's memory.
			t := &s.tasks[n]
			t.seg, t.from, t.to = i, from, min(from+scanBlocks*blockRows, sg.Rows)
			n++
		}
	}
	s.ntasks = n
	if !accelerated {
		s.raw = grow(s.raw, len(s.ub))
	}
	s.run(s.ntasks, func(j int) { s.scan(&s.tasks[j]) })
}

// scan computes stage 1 for a task's rows.
func (s *Searcher) scan(t *task) {
	sg := s.seg[t.seg]
	lo := s.off[t.seg] + t.from
	n := (t.to - t.from + blockRows - 1) / blockRows * blockRows
	ub, bmax := s.ub[lo:lo+n], s.bmax[lo/blockRows:(lo+n)/blockRows]
	inf := float32(math.Inf(1))
	if c := sg.Codes; c == nil {
		d := s.q.dim
		for i := range t.to - t.from {
			r := t.from + i
			ub[i] = s.dot(s.vec, sg.Arena[r*d:(r+1)*d])
		}
		for b := range bmax {
			bmax[b] = slices.Max(ub[b*blockRows : min((b+1)*blockRows, t.to-t.from)])
		}
	} else {
		var raw []uint16
		if !accelerated {
			raw = s.raw[lo : lo+n]
		}
		s.scanCodes(c, t.from, n, ub, bmax, raw)
		if c.inexact > 0 {
			for i := range t.to - t.from {
				if c.exactOnly(t.from + i) {
					ub[i], bmax[i/blockRows] = inf, inf
				}
			}
		}
	}
	nan := float32(math.NaN())
	for i := t.to - t.from; i < n; i++ {
		ub[i] = nan
	}
	if s.opt.Prune != nil {
		s.prune(t, ub, bmax)
	}
}

// prune marks handled (a NaN upper bound, as padding has) the task's rows
// that Prune rules out, and sets each block's maximum to the largest bound
// left in it (NaN when none is).
func (s *Searcher) prune(t *task, ub, bmax []float32) {
	rows := t.to - t.from
	t.pruned = grow(t.pruned, rows)
	clear(t.pruned)
	s.opt.Prune(t.seg, t.from, t.pruned)
	nan := float32(math.NaN())
	for i, out := range t.pruned {
		if out {
			ub[i] = nan
		}
	}
	for b := range bmax {
		m := nan
		for _, u := range ub[b*blockRows : (b+1)*blockRows] {
			if u > m || m != m {
				m = u // NaN stays out unless every bound is NaN
			}
		}
		bmax[b] = m
	}
}

// scanCodes runs the stage-1 kernel over n rows (whole blocks) from row
// from of c; raw is the portable kernel's scratch (nil with SIMD).
func (s *Searcher) scanCodes(c *Codes, from, n int, ub, bmax []float32, raw []uint16) {
	pairs, bb := c.q.pdim/8, c.blockBytes()
	b0, blocks := from/blockRows, n/blockRows
	if pairs <= maxScanPairs {
		scanEst(s.cq.lut, s.cq.wide, c.bits[b0*bb:], blocks, pairs, bb, c.c1[from:], c.sd1[from:], &s.cq.k, ub, bmax, raw)
		return
	}
	// Wide vectors: sum the scan 256 pairs at a time, then estimate.
	if raw == nil {
		raw = make([]uint16, n)
	}
	sums := make([]int32, n)
	for m := 0; m < pairs; m += maxScanPairs {
		ScanBits(s.cq.lut[32*m:], c.bits[b0*bb+32*m:], blocks, min(maxScanPairs, pairs-m), bb, raw)
		for i, x := range raw {
			sums[i] += int32(x)
		}
	}
	for i := range n {
		_, ub[i] = s.cq.k.est(sums[i], c.c1[from+i], c.sd1[from+i])
	}
	for b := range blocks {
		bmax[b] = slices.Max(ub[b*blockRows : (b+1)*blockRows])
	}
}

// refineListed computes the int4 estimates of the listed rows (in global
// order) and marks them handled in ub, so that no later pass over ub lists
// them again.
func (s *Searcher) refineListed() {
	n := len(s.list)
	s.rows, s.segs = grow(s.rows, n), grow(s.segs, n)
	s.dots, s.e4, s.u4 = grow(s.dots, n), grow(s.e4, n), grow(s.u4, n)
	nan := float32(math.NaN())
	// Each segment's rows are contiguous; the int4 kernel runs over runs
	// of one segment's rows.
	s.runs = s.runs[:0]
	for i := 0; i < n; {
		seg := s.segOf(int(s.list[i]))
		end, off := s.off[seg]+s.seg[seg].Rows, int32(s.off[seg])
		coded := s.seg[seg].Codes != nil
		j := i
		for ; j < n && int(s.list[j]) < end; j++ {
			g := s.list[j]
			s.rows[j], s.segs[j] = g-off, int32(seg)
			if !coded {
				s.e4[j], s.u4[j] = s.ub[g], s.ub[g] // exact
			}
			s.ub[g] = nan
		}
		if coded {
			for from := i; from < j; from += refineRows {
				s.runs = append(s.runs, span{seg, from, min(from+refineRows, j)})
			}
			s.stats.Refined += j - i
		}
		i = j
	}
	refine := func(k int) {
		r := s.runs[k]
		s.refine(s.seg[r.seg].Codes, s.rows[r.from:r.to], s.dots[r.from:r.to], s.e4[r.from:r.to], s.u4[r.from:r.to])
	}
	if n < refineRows {
		// A few rows (a search's seeds, one run per segment they fall in)
		// take less time than waking a helper for them.
		for k := range s.runs {
			refine(k)
		}
		return
	}
	s.run(len(s.runs), refine)
}

// refine computes the int4 estimates and upper bounds of rows of c (+Inf
// for a row only evaluated exactly), using dots as scratch.
func (s *Searcher) refine(c *Codes, rows, dots []int32, e4, u4 []float32) {
	if len(rows) == 0 {
		return
	}
	DotInt4Rows(s.cq.q8, c.nib, rows, dots)
	for i, row := range rows {
		e4[i], u4[i] = s.cq.est4(dots[i], c.s4[row], c.nrm[row])
		if c.inexact > 0 && c.exactOnly(int(row)) {
			e4[i], u4[i] = float32(math.Inf(1)), float32(math.Inf(1))
		}
	}
}

// segOf returns the segment holding global row g.
func (s *Searcher) segOf(g int) int {
	i, found := slices.BinarySearch(s.off, g)
	if !found {
		return i - 1
	}
	// Empty segments share their offset with the next one.
	for i+1 < len(s.off) && s.off[i+1] == g {
		i++
	}
	return i
}

// evalListed weighs and evaluates listed row i and marks it evaluated (a
// NaN upper bound): it reports whether the row was eligible and scored.
func (s *Searcher) evalListed(i int) bool {
	s.u4[i] = float32(math.NaN())
	return s.eval(int(s.segs[i]), int(s.rows[i]), 0, false)
}

// eval evaluates a row: it asks its weight (unless known), and records its
// exact score when eligible and not NaN; it reports whether it recorded it.
func (s *Searcher) eval(seg, row int, w float32, known bool) bool {
	if !known {
		w = 1
		if s.opt.Weight != nil {
			s.stats.Weighed++
			var ok bool
			if w, ok = s.opt.Weight(seg, row); !ok {
				return false
			}
		}
	}
	sim := s.dot(s.vec, s.row(seg, row))
	s.stats.Exact++
	score := sim * w
	if score != score {
		return false
	}
	s.hits = append(s.hits, Hit{Seg: seg, Row: row, Sim: sim, Score: score})
	return true
}

// row returns a row's vector: its arena's memory, or the searcher's buffer
// filled by the segment's reader.
func (s *Searcher) row(seg, row int) []float32 {
	d := s.q.dim
	if sg := &s.seg[seg]; sg.Arena != nil || sg.Reader == nil {
		return sg.Arena[row*d : (row+1)*d]
	}
	s.buf = grow(s.buf, d)
	s.seg[seg].Reader.ReadRow(row, s.buf)
	return s.buf
}

// kth returns the K-th best score of the hits (at least K of them).
func (s *Searcher) kth() float32 {
	s.scores = grow(s.scores, len(s.hits))
	for i, h := range s.hits {
		s.scores[i] = h.Score
	}
	s.top = TopK(s.scores, s.opt.K, s.top[:0])
	return s.scores[s.top[len(s.top)-1]]
}

// upper bounds a row's score from an upper bound of its Sim.
func (s *Searcher) upper(ub float32) float32 {
	switch {
	case s.opt.Weight == nil:
		return ub
	case ub >= 0:
		return ub * s.opt.MaxWeight
	}
	return ub * s.opt.MinWeight
}

// bounds returns the thresholds a bound of a row's Sim must reach for its
// score to reach tau: t for every row, th (at most t) for Heavy rows.
// upper is increasing, so one threshold on a bound decides; it is moved
// down a little so that rounding never drops a row.
func (s *Searcher) bounds(tau float32) (t, th float32) {
	t = tau
	switch {
	case s.opt.Weight == nil:
	case tau >= 0:
		t = tau / s.opt.MaxWeight
	default:
		t = tau / s.opt.MinWeight
	}
	t -= float32(math.Abs(float64(t))) * 1e-6
	th = t
	if s.heavyApart(tau) {
		th = tau / s.opt.HeavyWeight
		th -= float32(math.Abs(float64(th))) * 1e-6
	}
	return t, th
}

// candidates appends to the list of refined seeds the unhandled rows whose
// stage-1 upper bound can reach tau.
func (s *Searcher) candidates(tau float32) {
	t, th := s.bounds(tau)
	// Each task lists and refines its own candidates: one pass over the
	// cores instead of two, and no segment lookups.
	s.run(s.ntasks, func(j int) {
		tk := &s.tasks[j]
		lo := s.off[tk.seg] + tk.from
		n := tk.to - tk.from
		bmax := s.bmax[lo/blockRows : (lo+n+blockRows-1)/blockRows]
		tk.cand = filterBlocksGE(s.ub[lo:lo+n], bmax, t, int32(lo), tk.cand[:0])
		if th < t {
			s.heavyCandidates(tk, t, th)
		}
		s.refineTask(tk)
	})
	// Keep the refined seeds not yet evaluated, then list the candidates
	// (in global order: tasks are, and so is each task's list).
	kept := 0
	for i := range s.list {
		if s.u4[i] == s.u4[i] {
			s.list[kept], s.rows[kept], s.segs[kept] = s.list[i], s.rows[i], s.segs[i]
			s.e4[kept], s.u4[kept] = s.e4[i], s.u4[i]
			kept++
		}
	}
	s.list, s.rows, s.segs = s.list[:kept], s.rows[:kept], s.segs[:kept]
	s.e4, s.u4 = s.e4[:kept], s.u4[:kept]
	for _, tk := range s.tasks[:s.ntasks] {
		s.list = append(s.list, tk.cand...)
		s.rows = append(s.rows, tk.rows...)
		for range tk.cand {
			s.segs = append(s.segs, int32(tk.seg))
		}
		s.e4 = append(s.e4, tk.e4...)
		s.u4 = append(s.u4, tk.u4...)
		if s.seg[tk.seg].Codes != nil {
			s.stats.Refined += len(tk.cand)
		}
	}
}

// heavyCandidates adds to a task's candidates its Heavy rows whose bound
// reaches th but not t (those reaching t are listed already), keeping the
// list ascending.
func (s *Searcher) heavyCandidates(tk *task, t, th float32) {
	heavy := s.seg[tk.seg].Heavy
	i, _ := slices.BinarySearch(heavy, int32(tk.from))
	n := len(tk.cand)
	off := int32(s.off[tk.seg])
	for ; i < len(heavy) && int(heavy[i]) < tk.to; i++ {
		if u := s.ub[off+heavy[i]]; u >= th && u < t {
			tk.cand = append(tk.cand, off+heavy[i])
		}
	}
	if len(tk.cand) > n {
		slices.Sort(tk.cand)
	}
}

// heavyApart reports whether Heavy rows need a bound of their own for
// threshold tau: a heavier weight only lifts a score that can be positive.
func (s *Searcher) heavyApart(tau float32) bool {
	return s.opt.Weight != nil && tau >= 0 && s.opt.HeavyWeight > s.opt.MaxWeight
}

// heavy reports whether a row is one of its segment's Heavy rows.
func (s *Searcher) heavy(seg, row int) bool {
	_, found := slices.BinarySearch(s.seg[seg].Heavy, int32(row))
	return found
}

// refineTask computes the int4 estimates of a task's candidates (the exact
// dot twice in a segment without codes).
func (s *Searcher) refineTask(tk *task) {
	n := len(tk.cand)
	tk.rows, tk.dots = grow(tk.rows, n), grow(tk.dots, n)
	tk.e4, tk.u4 = grow(tk.e4, n), grow(tk.u4, n)
	off := int32(s.off[tk.seg])
	for i, g := range tk.cand {
		tk.rows[i] = g - off
	}
	if c := s.seg[tk.seg].Codes; c != nil {
		s.refine(c, tk.rows, tk.dots, tk.e4, tk.u4)
		return
	}
	for i, g := range tk.cand {
		tk.e4[i], tk.u4[i] = s.ub[g], s.ub[g] // exact
	}
}

// admit weighs and evaluates the refined rows whose upper bound can still
// reach tau.
func (s *Searcher) admit(tau float32) {
	heavy := s.heavyApart(tau)
	for i := range s.list {
		u := s.u4[i]
		seg, row := int(s.segs[i]), int(s.rows[i])
		if !(s.upper(u) >= tau) && !(heavy && u*s.opt.HeavyWeight >= tau && s.heavy(seg, row)) {
			continue // NaN: evaluated already
		}
		w := float32(1)
		if s.opt.Weight != nil {
			s.stats.Weighed++
			var ok bool
			if w, ok = s.opt.Weight(seg, row); !ok || u*w < tau {
				continue
			}
		}
		s.eval(seg, row, w, true)
	}
}

// evalAll evaluates every row exactly.
func (s *Searcher) evalAll() {
	for seg, sg := range s.seg {
		for row := range sg.Rows {
			s.eval(seg, row, 0, false)
		}
	}
}

// finish keeps the hits scoring at least the K-th best score and the floor,
// sorted.
func (s *Searcher) finish() []Hit {
	if len(s.hits) == 0 {
		return s.hits
	}
	floor := s.opt.Floor
	if len(s.hits) >= s.opt.K {
		floor = max(floor, s.kth())
	}
	kept := s.hits[:0]
	for _, h := range s.hits {
		if h.Score >= floor {
			kept = append(kept, h)
		}
	}
	slices.SortFunc(kept, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Seg, b.Seg); c != 0 {
			return c
		}
		return cmp.Compare(a.Row, b.Row)
	})
	s.hits = kept
	return kept
}
