package vecmath

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// coded is one benchmark data set: n random unit rows of dim 384, as one
// arena with its codes.
type coded struct {
	arena []float32
	codes *Codes
	n     int
}

const searchDim = 384

var codedSets sync.Map // n -> *coded

func codedSet(n int) *coded {
	if v, ok := codedSets.Load(n); ok {
		return v.(*coded)
	}
	q := NewQuantizer(searchDim)
	r := newRand(uint64(n))
	arena := make([]float32, n*searchDim)
	c := NewCodes(q)
	for i := range n {
		v := arena[i*searchDim : (i+1)*searchDim]
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		Normalize(v)
		c.Append(v)
	}
	set := &coded{arena: arena, codes: c, n: n}
	codedSets.Store(n, set)
	return set
}

// fanout runs tasks on GOMAXPROCS goroutines, as raftfsm does.
func fanout(n int, task func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= n {
					return
				}
				task(j)
			}
		})
	}
	wg.Wait()
}

// split runs fn over [0, n) in GOMAXPROCS contiguous parts, 32-aligned.
func split(n int, fn func(from, to int)) {
	workers := runtime.GOMAXPROCS(0)
	step := (n/workers + blockRows) / blockRows * blockRows
	var wg sync.WaitGroup
	for from := 0; from < n; from += step {
		wg.Go(func() { fn(from, min(from+step, n)) })
	}
	wg.Wait()
}

var searchSizes = []int{100_000, 1_000_000}

// BenchmarkSearchExactScan is the baseline: DotArena over every row, on one
// core and split over GOMAXPROCS cores.
func BenchmarkSearchExactScan(b *testing.B) {
	for _, n := range searchSizes {
		set := codedSet(n)
		q := randUnit(newRand(7), searchDim)
		out := make([]float32, n)
		b.Run(fmt.Sprintf("rows=%d/serial", n), func(b *testing.B) {
			b.SetBytes(int64(n) * searchDim * 4)
			for b.Loop() {
				DotArena(q, set.arena, searchDim, out)
			}
		})
		b.Run(fmt.Sprintf("rows=%d/parallel", n), func(b *testing.B) {
			b.SetBytes(int64(n) * searchDim * 4)
			for b.Loop() {
				split(n, func(from, to int) {
					DotArena(q, set.arena[from*searchDim:to*searchDim], searchDim, out[from:to])
				})
			}
		})
	}
}

// BenchmarkSearchCodeScan is stage 1 alone: the fast scan of the 1-bit
// codes and the estimates of every row.
func BenchmarkSearchCodeScan(b *testing.B) {
	for _, n := range searchSizes {
		set := codedSet(n)
		vec := randUnit(newRand(8), searchDim)
		for _, par := range []bool{false, true} {
			name := "serial"
			if par {
				name = "parallel"
			}
			b.Run(fmt.Sprintf("rows=%d/%s", n, name), func(b *testing.B) {
				s := NewSearcher(set.codes.q)
				segs := []Segment{{Arena: set.arena, Rows: n, Codes: set.codes}}
				s.begin(vec, segs, &SearchOptions{K: 1})
				s.cq.prepare(s.q, vec)
				s.raw = make([]uint16, len(s.ub))
				b.SetBytes(int64(len(set.codes.bits)))
				for b.Loop() {
					if par {
						split(n, func(from, to int) {
							m := (to - from + blockRows - 1) / blockRows * blockRows
							s.scanCodes(set.codes, from, m, s.ub[from:from+m], s.bmax[from/blockRows:], s.raw[from:from+m])
						})
					} else {
						s.scanCodes(set.codes, 0, len(s.ub), s.ub, s.bmax, s.raw)
					}
				}
			})
		}
	}
}

// BenchmarkSearchCoded is the whole quantised search (scan, seeds, int4
// refinement, exact re-rank) for the top 10 of random unit vectors, the
// hardest case for the codes (the best cosines are barely above the rest).
func BenchmarkSearchCoded(b *testing.B) {
	for _, n := range searchSizes {
		set := codedSet(n)
		for _, par := range []bool{false, true} {
			name := "serial"
			if par {
				name = "parallel"
			}
			b.Run(fmt.Sprintf("rows=%d/%s", n, name), func(b *testing.B) {
				s := NewSearcher(set.codes.q)
				segs := []Segment{{Arena: set.arena, Rows: n, Codes: set.codes}}
				opt := &SearchOptions{K: 10, Floor: -2}
				if par {
					opt.Fanout = fanout
				}
				r := newRand(9)
				queries := make([][]float32, 64)
				for i := range queries {
					queries[i] = randUnit(r, searchDim)
				}
				var st SearchStats
				i := 0
				for b.Loop() {
					s.Search(queries[i%len(queries)], segs, opt)
					st.Refined += s.stats.Refined
					st.Exact += s.stats.Exact
					i++
				}
				b.ReportMetric(float64(st.Refined)/float64(i), "int4rows/op")
				b.ReportMetric(float64(st.Exact)/float64(i), "exactrows/op")
			})
		}
	}
}

// BenchmarkCodesAppend is the cost a write pays to encode its row. The rows
// differ, as writes' do: one row encoded again and again lets the branch
// predictor learn its signs.
func BenchmarkCodesAppend(b *testing.B) {
	q := NewQuantizer(searchDim)
	r := newRand(10)
	vecs := make([][]float32, 1024)
	for i := range vecs {
		vecs[i] = randUnit(r, searchDim)
	}
	c := NewCodes(q)
	i := 0
	for b.Loop() {
		if c.Len() == 4096 {
			c.Truncate(0)
		}
		c.Append(vecs[i%len(vecs)])
		i++
	}
}
