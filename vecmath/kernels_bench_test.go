package vecmath

import (
	"fmt"
	"sync"
	"testing"
)

const benchRows = 100_000

// benchArena is one shared 100k x 512 arena (~205 MB); dim 384 uses its
// prefix, so the benchmarks allocate it once.
var benchArena = sync.OnceValue(func() []float32 {
	return randVec(newRand(100), benchRows*512)
})

// benchArenaKernel reports ns/op for one full scan and MB/s of arena read.
func benchArenaKernel(b *testing.B, kernel func(q, arena []float32, dim int, out []float32)) {
	for _, dim := range []int{384, 512} {
		b.Run(fmt.Sprintf("rows=%d/dim=%d", benchRows, dim), func(b *testing.B) {
			arena := benchArena()[:benchRows*dim]
			q := randUnit(newRand(101), dim)
			out := make([]float32, benchRows)
			b.SetBytes(int64(len(arena)) * 4)
			b.ResetTimer()
			for b.Loop() {
				kernel(q, arena, dim, out)
			}
		})
	}
}

func BenchmarkDotArena(b *testing.B) { benchArenaKernel(b, DotArena) }

func BenchmarkDotArenaRef(b *testing.B) { benchArenaKernel(b, DotArenaRef) }

// BenchmarkDotArenaScalar is DotArena on a machine where vek has no SIMD.
func BenchmarkDotArenaScalar(b *testing.B) {
	accelerated = false
	b.Cleanup(func() { accelerated = hardwareSIMD })
	benchArenaKernel(b, DotArena)
}

func BenchmarkDot(b *testing.B) {
	for _, dim := range []int{384, 512} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			r := newRand(102)
			x, y := randVec(r, dim), randVec(r, dim)
			b.SetBytes(int64(dim) * 8)
			var sink float32
			for b.Loop() {
				sink += Dot(x, y)
			}
			_ = sink
		})
	}
}

func BenchmarkTopK(b *testing.B) {
	scores := randScores(newRand(103), benchRows, "uniform")
	dst := make([]int, 0, 10)
	b.Run(fmt.Sprintf("n=%d/k=10", benchRows), func(b *testing.B) {
		for b.Loop() {
			dst = TopK(scores, 10, dst)
		}
	})
	b.Run(fmt.Sprintf("ref/n=%d/k=10", benchRows), func(b *testing.B) {
		for b.Loop() {
			_ = TopKRef(scores, 10)
		}
	})
}

func BenchmarkNearest(b *testing.B) {
	const dim = 384
	arena := benchArena()[:benchRows*dim]
	q := randUnit(newRand(104), dim)
	skip := func(i int) bool { return i%100 == 0 }
	b.SetBytes(int64(len(arena)) * 4)
	for b.Loop() {
		Nearest(q, arena, dim, benchRows, skip)
	}
}

func BenchmarkMMR(b *testing.B) {
	rel, vecs := randCandidates(newRand(105), 100, 384, false)
	b.Run("n=100/k=10/dim=384", func(b *testing.B) {
		for b.Loop() {
			MMR(rel, vecs, 10, 0.5, 1)
		}
	})
	b.Run("ref/n=100/k=10/dim=384", func(b *testing.B) {
		for b.Loop() {
			MMRRef(rel, vecs, 10, 0.5, 1)
		}
	})
}

// BenchmarkDotExactKernels: the write gate's exact dot, DotRef against
// DotFixed (d=384).
func BenchmarkDotExactKernels(b *testing.B) {
	r := newRand(3)
	x, y := randVec(r, 384), randVec(r, 384)
	var sink float32
	b.Run("DotRef", func(b *testing.B) {
		for range b.N {
			sink += DotRef(x, y)
		}
	})
	b.Run("DotFixed", func(b *testing.B) {
		for range b.N {
			sink += DotFixed(x, y)
		}
	})
	b.Run("Dot", func(b *testing.B) {
		for range b.N {
			sink += Dot(x, y)
		}
	})
	_ = sink
}

// BenchmarkDotInt4Rows is the int4 kernel over 1,000 cached rows, in one
// call and in one call a row (Bounder.Upper's way): a call costs little
// more than its rows. Setting up its constants with legacy-SSE moves once
// 256-bit registers were in use cost ~110 ns a call on the 2-core VM (146
// against 8 ns a row); VEX moves: 34 ns.
func BenchmarkDotInt4Rows(b *testing.B) {
	const dim, n = 384, 1000
	rng := newRand(9)
	q := NewQuantizer(dim)
	c := NewCodes(q)
	for range n {
		c.Append(randUnit(rng, dim))
	}
	cq := newCodeQuery(q.pdim)
	cq.prepare(q, randUnit(rng, dim))
	rows, out := make([]int32, n), make([]int32, n)
	for i := range rows {
		rows[i] = int32(rng.IntN(n))
	}
	b.Run("one-call", func(b *testing.B) {
		for b.Loop() {
			DotInt4Rows(cq.q8, c.nib, rows, out)
		}
	})
	b.Run("call-a-row", func(b *testing.B) {
		for b.Loop() {
			for i := range rows {
				DotInt4Rows(cq.q8, c.nib, rows[i:i+1], out[i:i+1])
			}
		}
	})
}

// BenchmarkFilterGE lists the rows of 100k upper bounds that reach a
// threshold 3% of them reach, as a search's candidate stage does.
func BenchmarkFilterGE(b *testing.B) {
	r := newRand(5)
	v := make([]float32, 100_000)
	for i := range v {
		v[i] = r.Float32()
	}
	var out []int32
	for b.Loop() {
		out = filterGE(v, 0.97, 0, out[:0])
	}
}

// BenchmarkPrepareQuery prepares a query for the code stages (rotation,
// quantisation, stage-1 tables): every read and every write's gate does it
// once.
func BenchmarkPrepareQuery(b *testing.B) {
	q := NewQuantizer(384)
	cq := newCodeQuery(q.pdim)
	v := randUnit(newRand(9), 384)
	for b.Loop() {
		cq.prepare(q, v)
	}
}
