package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	chromem "github.com/philippgille/chromem-go"
	"github.com/viterin/vek/vek32"

	"github.com/hebbdb/hebb/vecmath"
)

// KernelConfig shapes the kernel comparison: an exact top-K scan of N
// vectors of Dim floats, timed Runs times per kernel.
type KernelConfig struct {
	N, Dim, K, Runs int
	Seed            uint64
	// Baseline keeps only the ceilings and vecmath's scans (no chromem-go,
	// no plain loop): the bare-scan figures a search workload compares its
	// latency with.
	Baseline bool
	// Progress, when not nil, gets a line per run.
	Progress io.Writer
}

// KernelTiming is one kernel's figures over the runs.
type KernelTiming struct {
	Name     string  `json:"name"`
	Note     string  `json:"note,omitempty"`
	MedianMs float64 `json:"median_ms"`
	MinMs    float64 `json:"min_ms"`
	// GBPerS is the bytes the kernel reads over the median time: the
	// arena's, or the codes' for the quantised search (it was the arena's,
	// 115 GB/s).
	GBPerS float64 `json:"gb_per_s"`
	// Ratio is the ceiling's median time over this kernel's: 1 means the
	// scan runs as fast as streaming the bytes through one core.
	Ratio float64 `json:"ratio_to_ceiling"`
	// SameTopK reports whether the kernel found the same top-K set as
	// vecmath on every run's query, the warm-up's included (ceilings find
	// nothing and report true).
	SameTopK bool `json:"same_top_k"`
}

// KernelResult is the comparison's outcome.
type KernelResult struct {
	N           int            `json:"n"`
	Dim         int            `json:"dim"`
	K           int            `json:"k"`
	Runs        int            `json:"runs"`
	Bytes       int64          `json:"arena_bytes"`
	Accelerated bool           `json:"vecmath_simd"`
	Threads     int            `json:"cpus"`
	Kernels     []KernelTiming `json:"kernels"`
}

// kernel is one contender: run scans the arena for query q and returns the
// top-K row indices (nil for a ceiling).
type kernel struct {
	name, note string
	ceiling    bool
	run        func(q []float32) []int
	bytes      int64        // what it reads when not the arena (the quantised search's codes)
	failed     func() error // when not nil, a run that failed (RunKernels returns it, not figures)
}

// sink keeps the ceiling scans from being optimised away.
//
//lint:ignore U1000 written, never read: that is its job
var sink uint64

// RunKernels compares, on the same vectors: vecmath (DotArena + TopK) on one
// core and split over every CPU, a plain Go loop, chromem-go's exhaustive
// query, and memory-bandwidth ceilings over the same bytes (the fastest of
// them is the ceiling the ratios refer to).
func RunKernels(ctx context.Context, cfg KernelConfig) (*KernelResult, error) {
	if cfg.N < 1 || cfg.Dim < 1 || cfg.K < 1 || cfg.K > cfg.N || cfg.Runs < 1 {
		return nil, fmt.Errorf("%w: kernels need n >= k >= 1, dim >= 1 and runs >= 1", ErrBadConfig)
	}
	out := progress(cfg.Progress)
	fmt.Fprintf(out, "kernels  generating %d x %d vectors, encoding codes, loading chromem-go...\n", cfg.N, cfg.Dim)
	arena, queries := kernelData(cfg)
	ks, err := kernels(ctx, cfg, arena)
	if err != nil {
		return nil, err
	}
	times := make([][]time.Duration, len(ks))
	differs := make([]bool, len(ks)) // a run's top-k differed from vecmath's
	ref := slices.IndexFunc(ks, func(k kernel) bool { return k.name == refKernel })
	for r := -1; r < cfg.Runs; r++ { // run -1 warms caches and page tables up
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r >= 0 {
			fmt.Fprintf(out, "kernels  run %d/%d\n", r+1, cfg.Runs)
		}
		q := queries[max(r, 0)%len(queries)]
		tops := make([][]int, len(ks))
		for i, k := range ks {
			start := time.Now()
			top := k.run(q)
			if r >= 0 {
				times[i] = append(times[i], time.Since(start))
			}
			tops[i] = slices.Clone(top) // vecmath reuses its buffer
		}
		for i, k := range ks {
			differs[i] = differs[i] || !k.ceiling && ref >= 0 && !sameSet(tops[i], tops[ref])
		}
	}
	for _, k := range ks {
		if k.failed != nil {
			if err := k.failed(); err != nil {
				return nil, err
			}
		}
	}
	return kernelResult(cfg, ks, times, differs, int64(len(arena))*4), nil
}

// refKernel is the kernel whose top-k the others must find.
const refKernel = "vecmath DotArena+TopK"

// kernelData returns n random unit vectors in one arena and a few queries.
func kernelData(cfg KernelConfig) (arena []float32, queries [][]float32) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6b65726e656c))
	arena = make([]float32, cfg.N*cfg.Dim)
	for i := range arena {
		arena[i] = float32(rng.NormFloat64())
	}
	for i := range cfg.N {
		vecmath.Normalize(arena[i*cfg.Dim : (i+1)*cfg.Dim])
	}
	queries = make([][]float32, 4)
	for i := range queries {
		// A perturbed stored vector, so the top hits are meaningful.
		q := slices.Clone(arena[(i*7919%cfg.N)*cfg.Dim:][:cfg.Dim])
		for j := range q {
			q[j] += 0.3 * float32(rng.NormFloat64()) / float32(cfg.Dim)
		}
		vecmath.Normalize(q)
		queries[i] = q
	}
	return arena, queries
}

func kernels(ctx context.Context, cfg KernelConfig, arena []float32) ([]kernel, error) {
	n, dim, k := cfg.N, cfg.Dim, cfg.K
	scores := make([]float32, n)
	dst := make([]int, 0, k)
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(arena))), len(arena)/2)
	cpus := runtime.NumCPU()
	ks := []kernel{
		{name: "ceiling: sum of uint64 words", note: "reads every byte once, 1 core", ceiling: true,
			run: func([]float32) []int { sink += sumWords(words); return nil }},
		{name: "ceiling: SIMD float sum", note: "vek32.Sum, reads every byte once, 1 core", ceiling: true,
			run: func([]float32) []int { sink += uint64(vek32.Sum(arena)); return nil }},
		{name: "vecmath DotArena+TopK", note: simdNote(), run: func(q []float32) []int {
			vecmath.DotArena(q, arena, dim, scores)
			return vecmath.TopK(scores, k, dst)
		}},
		{name: "vecmath, split over CPUs", note: fmt.Sprintf("%d goroutines", cpus), run: func(q []float32) []int {
			parallelDot(q, arena, dim, scores, cpus)
			return vecmath.TopK(scores, k, dst)
		}},
		quantisedKernel(arena, n, dim, k, cpus),
	}
	if cfg.Baseline {
		return ks, nil
	}
	coll, err := chromemCollection(ctx, arena, n, dim)
	if err != nil {
		return nil, err
	}
	copyDst := make([]float32, len(arena))
	var qerr error // chromem-go's first failed query
	return append(ks,
		kernel{name: "ceiling: copy (memmove)", note: "reads and writes every byte, 1 core", ceiling: true,
			run: func([]float32) []int { copy(copyDst, arena); return nil }},
		kernel{name: "plain Go loop", note: "scalar dot, insertion top-k, 1 core", run: func(q []float32) []int {
			return plainScan(q, arena, dim, k)
		}},
		kernel{name: "chromem-go QueryEmbedding", note: fmt.Sprintf("v0.7.0, %d goroutines", cpus), run: func(q []float32) []int {
			top, err := chromemQuery(ctx, coll, q, k)
			if err != nil && qerr == nil {
				qerr = err // a failed query would be timed as a fast one
			}
			return top
		}, failed: func() error { return qerr }},
	), nil
}

// quantisedKernel is hebb's search path for large domains: vecmath's
// quantised search over codes of the same rows (1-bit scan, 4-bit
// refinement, exact re-rank), scans split over the CPUs. It reads a sixth
// of the float32 bytes, so it can beat the ceiling.
func quantisedKernel(arena []float32, n, dim, k, cpus int) kernel {
	q := vecmath.NewQuantizer(dim)
	codes := vecmath.NewCodes(q)
	for i := range n {
		codes.Append(arena[i*dim : (i+1)*dim])
	}
	s := vecmath.NewSearcher(q)
	segs := []vecmath.Segment{{Arena: arena, Rows: n, Codes: codes}}
	opt := &vecmath.SearchOptions{K: k, Floor: float32(math.Inf(-1)), Fanout: fanout(cpus)}
	var out []int
	return kernel{name: "vecmath quantised search", note: fmt.Sprintf("%d B codes/row, %d goroutines",
		codes.Bytes()/max(n, 1), cpus), bytes: int64(codes.Bytes()), run: func(v []float32) []int {
		out = out[:0]
		for _, h := range s.Search(v, segs, opt) {
			out = append(out, h.Row)
		}
		return out[:min(k, len(out))]
	}}
}

// fanout runs tasks on up to cpus goroutines.
func fanout(cpus int) func(n int, task func(i int)) {
	return func(n int, task func(i int)) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(n, cpus) {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
					task(i)
				}
			})
		}
		wg.Wait()
	}
}

func simdNote() string {
	if vecmath.Accelerated() {
		return "AVX2+FMA (vek), 1 core"
	}
	return "scalar fallback, 1 core"
}

func sumWords(w []uint64) uint64 {
	var s0, s1, s2, s3 uint64
	i := 0
	for ; i+4 <= len(w); i += 4 {
		s0 += w[i]
		s1 += w[i+1]
		s2 += w[i+2]
		s3 += w[i+3]
	}
	for ; i < len(w); i++ {
		s0 += w[i]
	}
	return s0 + s1 + s2 + s3
}

// plainScan is the obvious Go: one dot product per row, the best k kept in
// a sorted slice.
func plainScan(q, arena []float32, dim, k int) []int {
	type hit struct {
		i int
		s float32
	}
	best := make([]hit, 0, k+1)
	for i := 0; i+dim <= len(arena); i += dim {
		row := arena[i : i+dim]
		var s float32
		for j := range q {
			s += q[j] * row[j]
		}
		if len(best) == k && s <= best[k-1].s {
			continue
		}
		at := len(best)
		for at > 0 && best[at-1].s < s {
			at--
		}
		best = slices.Insert(best, at, hit{i / dim, s})
		if len(best) > k {
			best = best[:k]
		}
	}
	out := make([]int, len(best))
	for i, h := range best {
		out[i] = h.i
	}
	return out
}

// parallelDot splits DotArena over parts goroutines.
func parallelDot(q, arena []float32, dim int, scores []float32, parts int) {
	n := len(scores)
	per := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Go(func() { vecmath.DotArena(q, arena[lo*dim:hi*dim], dim, scores[lo:hi]) })
	}
	wg.Wait()
}

// chromemCollection loads the arena's rows as documents with precomputed
// embeddings (row i has ID "i"); they share the arena's memory.
func chromemCollection(ctx context.Context, arena []float32, n, dim int) (*chromem.Collection, error) {
	db := chromem.NewDB()
	coll, err := db.CreateCollection("bench", nil, func(context.Context, string) ([]float32, error) {
		return nil, fmt.Errorf("%w: the chromem-go collection embeds nothing", ErrBadConfig)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot create a chromem-go collection: %w", err)
	}
	docs := make([]chromem.Document, n)
	for i := range docs {
		docs[i] = chromem.Document{ID: strconv.Itoa(i), Embedding: arena[i*dim : (i+1)*dim : (i+1)*dim]}
	}
	if err := coll.AddDocuments(ctx, docs, runtime.NumCPU()); err != nil {
		return nil, fmt.Errorf("cannot load the chromem-go collection: %w", err)
	}
	return coll, nil
}

func chromemQuery(ctx context.Context, coll *chromem.Collection, q []float32, k int) ([]int, error) {
	res, err := coll.QueryEmbedding(ctx, q, k, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("chromem-go query: %w", err)
	}
	out := make([]int, len(res))
	for i, r := range res {
		out[i], _ = strconv.Atoi(r.ID)
	}
	return out, nil
}

func kernelResult(cfg KernelConfig, ks []kernel, times [][]time.Duration, differs []bool, bytes int64) *KernelResult {
	res := &KernelResult{N: cfg.N, Dim: cfg.Dim, K: cfg.K, Runs: cfg.Runs, Bytes: bytes,
		Accelerated: vecmath.Accelerated(), Threads: runtime.NumCPU()}
	var ceiling time.Duration
	for i, k := range ks {
		if m := median(times[i]); k.ceiling && (ceiling == 0 || m < ceiling) {
			ceiling = m
		}
	}
	for i, k := range ks {
		m := median(times[i])
		read := bytes
		if k.bytes > 0 {
			read = k.bytes
		}
		t := KernelTiming{Name: k.name, Note: k.note, MedianMs: ms(m), MinMs: ms(slices.Min(times[i])),
			GBPerS: float64(read) / m.Seconds() / 1e9, Ratio: ceiling.Seconds() / m.Seconds(),
			SameTopK: !differs[i]}
		res.Kernels = append(res.Kernels, t)
	}
	return res
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return max(s[len(s)/2], 1)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
