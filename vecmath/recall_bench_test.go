package vecmath_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hebbdb/hebb/bench"
	"github.com/hebbdb/hebb/router/embedder"
	"github.com/hebbdb/hebb/vecmath"
)

// recallSet is a benchmark corpus with its codes and its queries.
type recallSet struct {
	arena   []float32
	codes   *vecmath.Codes
	n       int
	queries map[string][][]float32
}

const recallDim = 384

var recallSets sync.Map // "kind/n" -> *recallSet

// hashSet embeds n texts of the benchmark's generator (bench.TextGen, seed
// 1) with the hash embedder, and three query kinds: "window" (3 to 8
// consecutive words of a stored text, what hebb bench searches with),
// "fresh" (a short new text) and "write" (a whole new text, what the write
// gate looks up).
func hashSet(b *testing.B, n int) *recallSet {
	key := fmt.Sprintf("hash/%d", n)
	if v, ok := recallSets.Load(key); ok {
		return v.(*recallSet)
	}
	g := bench.NewTextGen(1)
	h := embedder.NewHash(recallDim)
	embed := func(texts []string) [][]float32 {
		vs, err := h.Embed(context.Background(), texts)
		if err != nil {
			b.Fatal(err)
		}
		return vs
	}
	set := &recallSet{n: n, arena: make([]float32, 0, n*recallDim), queries: map[string][][]float32{}}
	for i := 0; i < n; i += 1000 {
		texts := make([]string, 0, 1000)
		for j := i; j < min(i+1000, n); j++ {
			texts = append(texts, g.Text(bench.StreamPopulate, uint64(j)))
		}
		for _, v := range embed(texts) {
			set.arena = append(set.arena, v...)
		}
	}
	const nq = 200
	var window, fresh, write []string
	for i := range nq {
		window = append(window, g.Query(bench.StreamPopulate, uint64(n), uint64(i)))
		fresh = append(fresh, g.Query(bench.StreamPopulate, 0, uint64(i)))
		write = append(write, g.Text(bench.StreamWrite, uint64(i)))
	}
	set.queries["window"] = embed(window)
	set.queries["fresh"] = embed(fresh)
	set.queries["write"] = embed(write)
	set.encode()
	recallSets.Store(key, set)
	return set
}

// randomSet is n random unit vectors and random unit queries.
func randomSet(n int) *recallSet {
	key := fmt.Sprintf("random/%d", n)
	if v, ok := recallSets.Load(key); ok {
		return v.(*recallSet)
	}
	r := rand.New(rand.NewPCG(uint64(n), 3))
	unit := func() []float32 {
		v := make([]float32, recallDim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vecmath.Normalize(v)
		return v
	}
	set := &recallSet{n: n, arena: make([]float32, 0, n*recallDim), queries: map[string][][]float32{}}
	for range n {
		set.arena = append(set.arena, unit()...)
	}
	for range 200 {
		set.queries["random"] = append(set.queries["random"], unit())
	}
	set.encode()
	recallSets.Store(key, set)
	return set
}

func (s *recallSet) encode() {
	s.codes = vecmath.NewCodes(vecmath.NewQuantizer(recallDim))
	for i := range s.n {
		s.codes.Append(s.arena[i*recallDim : (i+1)*recallDim])
	}
}

// BenchmarkRecall measures the quantised search against the exact one on
// the benchmark's texts and on random vectors: recall@K (the share of the
// exact top K, ties included, that Search returns), latency percentiles and
// the rows each stage touched. valence=on gives every row a weight in
// [0.75, 1.25] (hebb's valence modulation), which widens the first stage.
func BenchmarkRecall(b *testing.B) {
	type kind struct {
		name  string
		set   func(n int) *recallSet
		query string
		k     int
	}
	kinds := []kind{
		{"hash-window", func(n int) *recallSet { return hashSet(b, n) }, "window", 10},
		{"hash-fresh", func(n int) *recallSet { return hashSet(b, n) }, "fresh", 10},
		{"hash-write", func(n int) *recallSet { return hashSet(b, n) }, "write", 1},
		{"random", randomSet, "random", 10},
	}
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		for _, kd := range kinds {
			for _, valence := range []bool{false, true} {
				name := fmt.Sprintf("%s/rows=%d/k=%d/valence=%v", kd.name, n, kd.k, valence)
				b.Run(name, func(b *testing.B) {
					set := kd.set(n)
					runRecall(b, set, set.queries[kd.query], kd.k, valence)
				})
			}
		}
	}
}

func runRecall(b *testing.B, set *recallSet, queries [][]float32, k int, valence bool) {
	segs := []vecmath.Segment{{Arena: set.arena, Rows: set.n, Codes: set.codes}}
	opt := &vecmath.SearchOptions{K: k, Floor: float32(math.Inf(-1))}
	if valence {
		weights := make([]float32, set.n)
		r := rand.New(rand.NewPCG(5, 5))
		for i := range weights {
			weights[i] = 0.75 + 0.5*r.Float32()
		}
		opt.Weight = func(_, row int) (float32, bool) { return weights[row], true }
		opt.MinWeight, opt.MaxWeight = 0.75, 1.25
	}
	s := vecmath.NewSearcher(set.codes.Quantizer())
	want := make([][]vecmath.Hit, len(queries))
	for i, q := range queries {
		want[i] = slices.Clone(s.SearchRef(q, segs, opt))
	}
	var found, total, stage2, exact int
	var lat []time.Duration
	i := 0
	for b.Loop() {
		qi := i % len(queries)
		start := time.Now()
		got := s.Search(queries[qi], segs, opt)
		lat = append(lat, time.Since(start))
		if i < len(queries) {
			st := s.Stats()
			stage2 += st.Refined
			exact += st.Exact
			f, t := overlap(got, want[qi])
			found += f
			total += t
		}
		i++
	}
	slices.Sort(lat)
	q := min(i, len(queries))
	b.ReportMetric(float64(found)/float64(total), "recall")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(stage2)/float64(q), "int4rows/op")
	b.ReportMetric(float64(exact)/float64(q), "exactrows/op")
}

// overlap counts the exact hits Search found.
func overlap(got, want []vecmath.Hit) (int, int) {
	in := make(map[int]bool, len(got))
	for _, h := range got {
		in[h.Row] = true
	}
	f := 0
	for _, h := range want {
		if in[h.Row] {
			f++
		}
	}
	return f, len(want)
}

// BenchmarkSearchBlocks is the semantic search as a server runs it: the
// benchmark's texts in blocks of 8,192 rows, each with its own codes (as
// raftfsm keeps a domain's rows), the scan spread over the cores, the top 10
// above a floor of 0.3, the "window" queries hebb bench sends. It reports
// the median and p90 of a search and the median of its scan (until
// Scanned), and the rows refined and evaluated exactly.
func BenchmarkSearchBlocks(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			set := hashSet(b, n)
			var segs []vecmath.Segment
			for from := 0; from < n; from += 8192 {
				to := min(from+8192, n)
				c := vecmath.NewCodes(set.codes.Quantizer())
				for i := from; i < to; i++ {
					c.Append(set.arena[i*recallDim : (i+1)*recallDim])
				}
				segs = append(segs, vecmath.Segment{Arena: set.arena[from*recallDim : to*recallDim], Rows: to - from, Codes: c})
			}
			s := vecmath.NewSearcher(set.codes.Quantizer())
			var start time.Time
			var lat, scan []time.Duration
			opt := &vecmath.SearchOptions{K: 10, Floor: 0.3, Fanout: vecmath.FanoutForTest,
				Scanned: func() { scan = append(scan, time.Since(start)) }}
			queries := set.queries["window"]
			var refined, exact int
			i := 0
			for b.Loop() {
				start = time.Now()
				s.Search(queries[i%len(queries)], segs, opt)
				lat = append(lat, time.Since(start))
				refined += s.Stats().Refined
				exact += s.Stats().Exact
				i++
			}
			slices.Sort(lat)
			slices.Sort(scan)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)*9/10]), "p90-ms")
			b.ReportMetric(ms(scan[len(scan)/2]), "scan-p50-ms")
			b.ReportMetric(float64(refined)/float64(i), "int4rows/op")
			b.ReportMetric(float64(exact)/float64(i), "exactrows/op")
		})
	}
}
