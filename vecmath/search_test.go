package vecmath

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// codedArena returns n random unit rows of dim floats and their codes.
func codedArena(seed uint64, q *Quantizer, n int) ([]float32, *Codes) {
	r := newRand(seed)
	arena := make([]float32, 0, n*q.Dim())
	c := NewCodes(q)
	for range n {
		v := randUnit(r, q.Dim())
		arena = append(arena, v...)
		c.Append(v)
	}
	return arena, c
}

func hitKeys(h []Hit) []string {
	out := make([]string, len(h))
	for i, x := range h {
		out[i] = fmt.Sprintf("%d/%d:%v", x.Seg, x.Row, x.Score)
	}
	return out
}

// bounds returns the stage-1 and int4 upper bounds of row i of c for vec,
// as a search computes them.
func bounds(c *Codes, vec []float32, i int) (ub1, ub4 float32) {
	cq := newCodeQuery(c.q.pdim)
	if !cq.prepare(c.q, vec) {
		return float32(math.Inf(1)), float32(math.Inf(1))
	}
	blocks := (c.n + blockRows - 1) / blockRows
	n := blocks * blockRows
	est, ub := make([]float32, n), make([]float32, n)
	scanEstRef(cq.lut, c.bits, blocks, c.q.pdim/8, c.blockBytes(), c.c1, c.sd1, &cq.k, est, ub,
		make([]float32, blocks), make([]uint16, n))
	dot := make([]int32, 1)
	dotInt4RowsRef(cq.q8, c.nib, []int32{int32(i)}, dot)
	_, ub4 = cq.est4(dot[0], c.s4[i], c.nrm[i])
	return ub[i], ub4
}

// checkSearch compares Search with SearchRef. They must agree exactly,
// except that Search may miss a row whose exact score exceeds one of its
// upper bounds (the one way a quantised search can differ); then Search
// must equal SearchRef over the rows it did not miss. It returns how many
// rows Search missed.
func checkSearch(t *testing.T, s *Searcher, vec []float32, segs []Segment, opt *SearchOptions) int {
	t.Helper()
	got := slices.Clone(s.Search(vec, segs, opt))
	want := slices.Clone(s.SearchRef(vec, segs, opt))
	if slices.Equal(got, want) {
		return 0
	}
	found := map[[2]int]bool{}
	for _, h := range got {
		found[[2]int{h.Seg, h.Row}] = true
	}
	missed := map[[2]int]bool{}
	for _, h := range want {
		if found[[2]int{h.Seg, h.Row}] {
			continue
		}
		c := segs[h.Seg].Codes
		if c == nil {
			t.Fatalf("Search missed %+v of a segment scanned exactly", h)
		}
		ub1, ub4 := bounds(c, vec, h.Row)
		if !(h.Sim > ub1 || h.Sim > ub4) {
			t.Fatalf("Search missed %+v within its bounds (stage 1 %v, int4 %v):\n got %v\nwant %v",
				h, ub1, ub4, hitKeys(got), hitKeys(want))
		}
		missed[[2]int{h.Seg, h.Row}] = true
	}
	without := *opt
	without.Weight = func(seg, row int) (float32, bool) {
		if missed[[2]int{seg, row}] {
			return 0, false
		}
		if opt.Weight == nil {
			return 1, true
		}
		return opt.Weight(seg, row)
	}
	if opt.Weight == nil {
		without.MinWeight, without.MaxWeight = 1, 1
	}
	if rest := s.SearchRef(vec, segs, &without); !slices.Equal(got, rest) {
		t.Fatalf("Search = %v\nwant %v (the exact result without the %d rows it missed)", hitKeys(got), hitKeys(rest), len(missed))
	}
	return len(missed)
}

func TestSearchMatchesReference(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for _, dim := range []int{8, 100, 384} {
			q := NewQuantizer(dim)
			for _, n := range []int{0, 1, 31, 33, 2000} {
				arena, codes := codedArena(uint64(dim*n+1), q, n)
				for _, k := range []int{1, 10, 50} {
					t.Run(fmt.Sprintf("dim=%d/n=%d/k=%d", dim, n, k), func(t *testing.T) {
						s := NewSearcher(q)
						r := newRand(uint64(k))
						for range 5 {
							vec := randUnit(r, dim)
							segs := []Segment{{Arena: arena, Rows: n, Codes: codes}}
							opt := &SearchOptions{K: k, Floor: float32(math.Inf(-1))}
							checkSearch(t, s, vec, segs, opt)
						}
					})
				}
			}
		}
	})
}

// searchCase builds segments and options for one table case.
type searchCase struct {
	name  string
	dim   int
	rows  []int // rows per segment; a negative count is a segment without codes
	k     int
	floor float32
	// weight, when set, is the weight of row r of segment s, 0 meaning
	// ineligible.
	weight func(s, r int) float32
	edit   func(arena []float32, dim int) // changes rows before encoding
	fanout bool
	// prune, with weight, sets Prune to rule out most rows of weight 0
	// (not every one: a bit summary lets some through, and Weight refuses
	// those).
	prune bool
}

func (c searchCase) build(seed uint64) ([]Segment, *SearchOptions, *Quantizer) {
	q := NewQuantizer(c.dim)
	r := newRand(seed)
	var segs []Segment
	for _, n := range c.rows {
		rows := max(n, -n)
		arena := make([]float32, 0, rows*c.dim)
		for range rows {
			arena = append(arena, randUnit(r, c.dim)...)
		}
		if c.edit != nil {
			c.edit(arena, c.dim)
		}
		sg := Segment{Arena: arena, Rows: rows}
		if n >= 0 {
			sg.Codes = NewCodes(q)
			for i := range rows {
				sg.Codes.Append(arena[i*c.dim : (i+1)*c.dim])
			}
		}
		segs = append(segs, sg)
	}
	opt := &SearchOptions{K: c.k, Floor: c.floor}
	if c.weight != nil {
		opt.Weight = func(s, r int) (float32, bool) {
			w := c.weight(s, r)
			return w, w > 0
		}
		opt.MinWeight, opt.MaxWeight = 0.75, 1.25
	}
	if c.fanout {
		opt.Fanout = fanout
	}
	if c.prune {
		opt.Prune = func(seg, from int, out []bool) {
			for i := range out {
				out[i] = c.weight(seg, from+i) == 0 && (from+i)%5 != 0
			}
		}
	}
	return segs, opt, q
}

func TestSearchCases(t *testing.T) {
	ninf := float32(math.Inf(-1))
	valence := func(s, r int) float32 { return 0.75 + 0.5*float32((s*7919+r*104729)%1000)/999 }
	cases := []searchCase{
		{name: "one segment", dim: 384, rows: []int{3000}, k: 10, floor: ninf},
		{name: "k above rows", dim: 64, rows: []int{40}, k: 100, floor: ninf},
		{name: "k zero", dim: 64, rows: []int{40}, k: 0, floor: ninf},
		{name: "no rows", dim: 64, rows: []int{0, 0}, k: 5, floor: ninf},
		{name: "segments with and without codes", dim: 128, rows: []int{1000, -300, 0, 777, -1}, k: 20, floor: ninf},
		{name: "weights", dim: 384, rows: []int{2500}, k: 10, floor: ninf, weight: valence},
		{name: "most rows ineligible", dim: 384, rows: []int{3000}, k: 10, floor: ninf,
			weight: func(s, r int) float32 {
				if r%97 != 0 {
					return 0
				}
				return 1
			}},
		{name: "every row ineligible", dim: 64, rows: []int{500}, k: 3, floor: ninf,
			weight: func(int, int) float32 { return 0 }},
		{name: "few rows eligible among many", dim: 384, rows: []int{12000, 9000}, k: 10, floor: ninf,
			weight: func(s, r int) float32 {
				if (s*12000+r)%997 != 0 {
					return 0
				}
				return 1
			}},
		{name: "every row ineligible, with a floor", dim: 384, rows: []int{3000}, k: 10, floor: 0.1,
			weight: func(int, int) float32 { return 0 }},
		{name: "most rows ineligible, with a floor", dim: 384, rows: []int{3000}, k: 10, floor: 0.05,
			weight: func(s, r int) float32 {
				if r%97 != 0 {
					return 0
				}
				return 1
			}},
		{name: "most rows ineligible, pruned", dim: 384, rows: []int{3000, -200, 900}, k: 10, floor: ninf, prune: true,
			weight: func(s, r int) float32 {
				if r%97 != 0 {
					return 0
				}
				return 1
			}},
		{name: "every row ineligible, pruned", dim: 384, rows: []int{3000}, k: 10, floor: ninf, prune: true,
			weight: func(int, int) float32 { return 0 }},
		{name: "few rows eligible among many, pruned, parallel", dim: 384, rows: []int{12000, 9000}, k: 10,
			floor: ninf, prune: true, fanout: true,
			weight: func(s, r int) float32 {
				if (s*12000+r)%997 != 0 {
					return 0
				}
				return 1 + float32(r%3)/8
			}},
		{name: "some rows pruned, with a floor", dim: 384, rows: []int{3000}, k: 10, floor: 0.05, prune: true,
			weight: func(s, r int) float32 {
				if r%2 != 0 {
					return 0
				}
				return 1
			}},
		{name: "high floor", dim: 384, rows: []int{3000}, k: 10, floor: 0.15},
		{name: "floor above everything", dim: 384, rows: []int{1000}, k: 10, floor: 0.9},
		{name: "wide vectors", dim: 2200, rows: []int{300}, k: 5, floor: ninf},
		{name: "parallel", dim: 384, rows: []int{20000, 9000}, k: 10, floor: ninf, fanout: true, weight: valence},
		{name: "duplicate rows", dim: 64, rows: []int{600}, k: 10, floor: ninf,
			edit: func(a []float32, d int) {
				for i := 1; i < 600; i += 2 {
					copy(a[i*d:(i+1)*d], a[(i-1)*d:i*d])
				}
			}},
		{name: "zero and non-finite rows", dim: 64, rows: []int{700}, k: 10, floor: ninf,
			edit: func(a []float32, d int) {
				clear(a[3*d : 4*d])
				a[10*d+5] = nan
				a[20*d] = inf
				for j := range d {
					a[30*d+j] = 3e38 // its rotation overflows
				}
			}},
	}
	forEachPath(t, func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				segs, opt, q := c.build(uint64(100 + i))
				s := NewSearcher(q)
				r := newRand(uint64(200 + i))
				missed := 0
				for range 8 {
					missed += checkSearch(t, s, randUnit(r, c.dim), segs, opt)
				}
				if missed > 1 {
					t.Errorf("%d rows missed in 8 searches", missed)
				}
			})
		}
	})
}

// TestSearchFloorBoundsWork: rows whose bounds cannot reach the floor are
// never weighed, however few rows are eligible (a metadata filter matching
// no atom weighed every row of the tenant: ~50 ms a search at 100k atoms).
func TestSearchFloorBoundsWork(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		c := searchCase{dim: 384, rows: []int{20000}, k: 10, floor: 0.15,
			weight: func(int, int) float32 { return 0 }}
		segs, opt, q := c.build(7)
		s := NewSearcher(q)
		r := newRand(8)
		for range 4 {
			if got := s.Search(randUnit(r, c.dim), segs, opt); len(got) != 0 {
				t.Fatalf("%d hits, every row ineligible", len(got))
			}
			// Random unit rows' cosines have deviation 1/sqrt(384) = 0.051:
			// 0.15 is three of them, and the int4 bounds of ~4% of the
			// rows reach it (the 1-bit bounds of about half).
			if st := s.Stats(); st.Weighed > c.rows[0]/10 {
				t.Fatalf("%d of %d rows weighed (%d refined) under a floor of %v", st.Weighed, c.rows[0], st.Refined, c.floor)
			}
		}
	})
}

// TestSearchPruneSparesWork: rows Prune rules out are neither refined
// nor weighed, whatever the floor (a metadata filter no atom passes, at
// min_relevance 0, weighed every row of the tenant).
func TestSearchPruneSparesWork(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		c := searchCase{dim: 384, rows: []int{20000, 5000}, k: 10, floor: float32(math.Inf(-1)), fanout: true,
			weight: func(_, r int) float32 {
				if r == 4321 {
					return 1
				}
				return 0
			}}
		segs, opt, q := c.build(17)
		opt.Prune = func(_, from int, out []bool) {
			for i := range out {
				out[i] = from+i != 4321
			}
		}
		s := NewSearcher(q)
		r := newRand(18)
		for range 4 {
			got := s.Search(randUnit(r, c.dim), segs, opt)
			if len(got) != 2 || got[0].Row != 4321 || got[1].Row != 4321 {
				t.Fatalf("hits %v, want row 4321 of both segments", hitKeys(got))
			}
			if st := s.Stats(); st.Weighed != 2 || st.Refined > 2 {
				t.Fatalf("%d rows weighed and %d refined, want the 2 Prune let through", st.Weighed, st.Refined)
			}
		}
	})
}

func TestSearchDegenerateQueries(t *testing.T) {
	segs, opt, q := searchCase{dim: 64, rows: []int{300}, k: 5, floor: float32(math.Inf(-1))}.build(9)
	s := NewSearcher(q)
	for name, vec := range map[string][]float32{
		"zero": make([]float32, 64),
		"nan":  append([]float32{nan}, make([]float32, 63)...),
		"inf":  append([]float32{inf}, make([]float32, 63)...),
		"tiny": append([]float32{1e-44}, make([]float32, 63)...),
	} {
		t.Run(name, func(t *testing.T) {
			if n := checkSearch(t, s, vec, segs, opt); n != 0 {
				t.Fatalf("%d rows missed", n)
			}
		})
	}
}

// TestSearchScanned: Scanned is called once a search, after the scan (the
// estimates of every row are there) and before any row is evaluated, also
// for a query that scans nothing.
func TestSearchScanned(t *testing.T) {
	segs, opt, q := searchCase{dim: 64, rows: []int{300, 40}, k: 5, floor: float32(math.Inf(-1))}.build(3)
	s := NewSearcher(q)
	r := newRand(4)
	for name, vec := range map[string][]float32{"random": randVec(r, 64), "zero": make([]float32, 64)} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			o := *opt
			o.Scanned = func() {
				calls++
				if s.stats.Exact != 0 {
					t.Errorf("%d rows evaluated before Scanned", s.stats.Exact)
				}
				if name == "random" && !(s.ub[0] == s.ub[0]) {
					t.Errorf("no bound of row 0 at Scanned")
				}
			}
			s.Search(vec, segs, &o)
			if calls != 1 {
				t.Fatalf("Scanned called %d times", calls)
			}
		})
	}
}

func TestSearchPanics(t *testing.T) {
	q := NewQuantizer(8)
	c := NewCodes(q)
	c.Append(make([]float32, 8))
	cases := map[string]func(){
		"query length": func() {
			NewSearcher(q).Search(make([]float32, 7), nil, &SearchOptions{K: 1})
		},
		"short arena": func() {
			NewSearcher(q).Search(make([]float32, 8), []Segment{{Arena: make([]float32, 8), Rows: 2}}, &SearchOptions{K: 1})
		},
		"codes of other rows": func() {
			NewSearcher(q).Search(make([]float32, 8), []Segment{{Arena: make([]float32, 16), Rows: 2, Codes: c}}, &SearchOptions{K: 1})
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

// TestSearchSameOnEveryPath: with DotRef as the exact kernel, the SIMD and
// the portable paths return bit-identical hits (what replicas of the write
// gate rely on).
func TestSearchSameOnEveryPath(t *testing.T) {
	if !hardwareSIMD {
		t.Skip("no SIMD path on this CPU")
	}
	c := searchCase{dim: 384, rows: []int{5000}, k: 8, floor: float32(math.Inf(-1))}
	segs, opt, q := c.build(11)
	opt.Exact = DotRef
	vec := randUnit(newRand(12), 384)
	var results [][]Hit
	forEachPath(t, func(t *testing.T) {
		results = append(results, slices.Clone(NewSearcher(q).Search(vec, segs, opt)))
	})
	if len(results) != 2 || !slices.Equal(results[0], results[1]) {
		t.Fatalf("paths differ: %v", results)
	}
}

// TestEstimatorCalibration checks the premise of the bounds: the 1-bit
// estimate's error, divided by the deviation its bound assumes, has a
// standard deviation close to 1 (about 1.0 measured), and the int4 error
// stays within its bound.
func TestEstimatorCalibration(t *testing.T) {
	const dim, n = 384, 2000
	q := NewQuantizer(dim)
	arena, c := codedArena(13, q, n)
	r := newRand(14)
	var sum, sq float64
	count := 0
	for range 10 {
		vec := randUnit(r, dim)
		cq := newCodeQuery(q.pdim)
		cq.prepare(q, vec)
		blocks := (n + blockRows - 1) / blockRows
		est, ub := make([]float32, blocks*blockRows), make([]float32, blocks*blockRows)
		scanEstRef(cq.lut, c.bits, blocks, q.pdim/8, c.blockBytes(), c.c1, c.sd1, &cq.k, est, ub,
			make([]float32, blocks), make([]uint16, blocks*blockRows))
		rows := make([]int32, n)
		for i := range rows {
			rows[i] = int32(i)
		}
		dots := make([]int32, n)
		dotInt4RowsRef(cq.q8, c.nib, rows, dots)
		for i := range n {
			exact := float64(DotRef(vec, arena[i*dim:(i+1)*dim]))
			dev := float64(ub[i]-est[i]) / bitsEps
			z := (float64(est[i]) - exact) / dev
			sum += z
			sq += z * z
			count++
			if _, ub4 := cq.est4(dots[i], c.s4[i], c.nrm[i]); float64(ub4) < exact {
				t.Fatalf("row %d: int4 bound %v below the exact %v", i, ub4, exact)
			}
		}
	}
	mean := sum / float64(count)
	sd := math.Sqrt(sq/float64(count) - mean*mean)
	if math.Abs(mean) > 0.05 || sd < 0.7 || sd > 1.1 {
		t.Fatalf("normalised 1-bit error: mean %.3f, deviation %.3f", mean, sd)
	}
}

// TestSearchExactRowsBehindSeeds: rows of a segment without codes that
// place in the top K although the coded rows' wider bounds took every seed
// are found as candidates.
func TestSearchExactRowsBehindSeeds(t *testing.T) {
	const dim, n, k = 384, 4000, 10
	q := NewQuantizer(dim)
	r := newRand(41)
	vec := randUnit(r, dim)
	coded := make([]float32, 0, n*dim)
	c := NewCodes(q)
	for range n {
		v := randUnit(r, dim)
		coded = append(coded, v...)
		c.Append(v)
	}
	// Exact rows at cosines about 0.04 to 0.14: some among the best of
	// the random rows (deviation 0.05), under the seeds' bounds.
	var exact []float32
	for i := range 40 {
		exact = append(exact, nearUnit(r, vec, 0.04+0.10*float32(i)/40)...)
	}
	segs := []Segment{{Arena: coded, Rows: n, Codes: c}, {Arena: exact, Rows: 40}}
	opt := &SearchOptions{K: k, Floor: float32(math.Inf(-1))}
	s := NewSearcher(q)
	want := s.SearchRef(vec, segs, opt)
	inExact := 0
	for _, h := range want {
		if h.Seg == 1 {
			inExact++
		}
	}
	if inExact == 0 || inExact == len(want) {
		t.Fatalf("%d of the top %d rows are exact ones: the case tests nothing", inExact, len(want))
	}
	if missed := checkSearch(t, s, vec, segs, opt); missed != 0 {
		t.Fatalf("%d rows missed", missed)
	}
}

// TestSearchHeavyRows: rows listed as Heavy, whose weight exceeds
// MaxWeight, place in the top K although neither their blocks nor their
// bounds reach the other rows' seeds and threshold.
func TestSearchHeavyRows(t *testing.T) {
	const dim, n, k = 384, 6000, 10
	q := NewQuantizer(dim)
	r := newRand(43)
	vec := randUnit(r, dim)
	// The first row of blocks 0-99 near the query (cosines 0.40 to 0.50,
	// weight 1: more blocks than the seeds take), a row of blocks 100-119
	// less near (0.20 to 0.30) but Heavy (weight 2), the rest random
	// (weight 0.8).
	kind := func(row int) int { // 0 near, 1 heavy, 2 random
		switch {
		case row%32 == 0 && row < 100*32:
			return 0
		case row%32 == 5 && row >= 100*32 && row < 120*32:
			return 1
		}
		return 2
	}
	arena := make([]float32, 0, n*dim)
	var heavy []int32
	for i := range n {
		switch kind(i) {
		case 0:
			arena = append(arena, nearUnit(r, vec, 0.40+0.1*float32(i/32)/100)...)
		case 1:
			arena = append(arena, nearUnit(r, vec, 0.20+0.1*float32(i/32-100)/20)...)
			heavy = append(heavy, int32(i))
		default:
			arena = append(arena, randUnit(r, dim)...)
		}
	}
	c := NewCodes(q)
	for i := range n {
		c.Append(arena[i*dim : (i+1)*dim])
	}
	weight := func(_, row int) (float32, bool) {
		return [3]float32{1, 2, 0.8}[kind(row)], true
	}
	for _, fan := range []bool{false, true} {
		segs := []Segment{{Arena: arena, Rows: n, Codes: c, Heavy: heavy}}
		opt := &SearchOptions{K: k, Floor: float32(math.Inf(-1)), Weight: weight,
			MinWeight: 0.8, MaxWeight: 1, HeavyWeight: 2}
		if fan {
			opt.Fanout = fanout
		}
		s := NewSearcher(q)
		want := s.SearchRef(vec, segs, opt)
		inHeavy := 0
		for _, h := range want {
			if kind(h.Row) == 1 {
				inHeavy++
			}
		}
		if inHeavy == 0 || inHeavy == len(want) {
			t.Fatalf("%d of the top %d rows are heavy ones: the case tests nothing", inHeavy, len(want))
		}
		if missed := checkSearch(t, s, vec, segs, opt); missed != 0 {
			t.Fatalf("fanout %v: %d rows missed", fan, missed)
		}
	}
	// Only the heavy rows eligible, fewer than K, under a floor their Sims
	// stay below (0.2-0.3 against 0.35) and their scores reach (0.4-0.6):
	// the seeds' rounds must keep them for their own bound.
	onlyHeavy := func(_, row int) (float32, bool) { return 2, kind(row) == 1 }
	segs := []Segment{{Arena: arena, Rows: n, Codes: c, Heavy: heavy}}
	opt := &SearchOptions{K: 30, Floor: 0.35, Weight: onlyHeavy, MinWeight: 0.8, MaxWeight: 1, HeavyWeight: 2}
	s := NewSearcher(q)
	if want := s.SearchRef(vec, segs, opt); len(want) != 20 {
		t.Fatalf("%d heavy rows above the floor, want 20: the case tests nothing", len(want))
	}
	if missed := checkSearch(t, s, vec, segs, opt); missed != 0 {
		t.Fatalf("only heavy rows eligible: %d rows missed", missed)
	}
}
