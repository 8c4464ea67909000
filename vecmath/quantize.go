package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/viterin/vek/vek32"
)

// Rotation parameters: a fixed seed (replicas must encode identically), the
// block size of the Walsh-Hadamard transform and the number of rounds.
const (
	rotSeed   = 0x6865626271 // "hebbq"
	rotBlock  = 128
	rotRounds = 3
)

// Bound widths, in standard deviations of each estimator's error (see
// doc.go, "Quantised search"). The 1-bit estimator's error is close to
// Gaussian with the per-row deviation RaBitQ predicts; 4 deviations leave
// about 3e-5 of true top rows outside the first stage.
const (
	bitsEps  = 3
	int4Eps  = 5
	inv12    = 0.28867513459481287 // 1/sqrt(12): deviation of a uniform rounding error per unit step
	q5Levels = 15                  // stage-1 query: integers in [-15, 15], so a LUT entry fits 7 bits
	q8Levels = 127                 // stage-2 query: int8
	int4Max  = 7                   // int4 codes hold round(x/scale) in [-7, 7], stored +7
)

// Quantizer holds the fixed random rotation used to encode rows and queries
// of one dimension: a vector is zero-padded to PaddedDim (a multiple of 128),
// then rotRounds times multiplied by random signs, Walsh-Hadamard transformed
// per 128-float block and interleaved across blocks. The rotation is
// orthogonal, so dot products are preserved, and it spreads every vector's
// energy evenly over the coordinates, which is what makes one sign bit per
// coordinate an unbiased, well-behaved estimator.
//
// A Quantizer is immutable and safe for concurrent use. NewQuantizer is
// deterministic: the same dim gives the same rotation on every machine.
type Quantizer struct {
	dim, pdim int
	signs     [rotRounds][]float32
	scale     float32   // (1/sqrt(rotBlock))^rotRounds
	scratch   sync.Pool // *rowScratch of EncodeRow
}

// NewQuantizer returns the quantizer of vectors of length dim (dim > 0).
func NewQuantizer(dim int) *Quantizer {
	if dim <= 0 {
		panic(fmt.Sprintf("vecmath: quantizer dimension %d", dim))
	}
	pdim := (dim + rotBlock - 1) / rotBlock * rotBlock
	q := &Quantizer{dim: dim, pdim: pdim,
		scale: float32(math.Pow(rotBlock, -float64(rotRounds)/2))}
	r := rand.New(rand.NewPCG(rotSeed, uint64(pdim)))
	for k := range q.signs {
		s := make([]float32, pdim)
		for j := range s {
			s[j] = 1
			if r.Uint64()&1 == 1 {
				s[j] = -1
			}
		}
		q.signs[k] = s
	}
	return q
}

// Dim is the length of the vectors the quantizer encodes.
func (q *Quantizer) Dim() int { return q.dim }

// PaddedDim is the length of a rotated vector: Dim rounded up to 128.
func (q *Quantizer) PaddedDim() int { return q.pdim }

// rotate writes the rotation of v (length dim) into out (length pdim), using
// tmp (length pdim) as scratch. Only additions, subtractions and
// multiplications by ±1 and by one constant are involved, each rounded to
// float32, so the result is bit-identical on every platform.
func (q *Quantizer) rotate(v, out, tmp []float32) {
	if len(v) != q.dim {
		panic(fmt.Sprintf("vecmath: vector length %d != dim %d", len(v), q.dim))
	}
	out = out[:q.pdim]
	tmp = tmp[:q.pdim]
	copy(out, v)
	clear(out[q.dim:])
	blocks := q.pdim / rotBlock
	for k := range rotRounds {
		// Elementwise products: the same bits with SIMD or without, so
		// every replica's codes agree (TestCodesGolden).
		vek32.Mul_Inplace(out, q.signs[k])
		for b := range blocks {
			fwht(out[b*rotBlock : (b+1)*rotBlock])
		}
		if blocks > 1 {
			// Element i of block b moves to i*blocks+b, so the next round's
			// blocks mix coordinates of every block.
			interleave(tmp, out, blocks)
			copy(out, tmp)
		}
	}
	vek32.MulNumber_Inplace(out, q.scale)
}

// interleave moves element i of block b of src to dst[i*blocks+b], writing
// dst in order (written the other way, in strides, it took half of a
// rotation's time). Three blocks, d=384, take the unrolled path; up to
// maxInterleave others read each block through an array pointer, with no
// bounds check per element (the loop over src's indexes took 4 ns an
// element at seven blocks, the builtin embedder's 896 dimensions).
func interleave(dst, src []float32, blocks int) {
	if blocks == 3 {
		a := (*[rotBlock]float32)(src)
		b := (*[rotBlock]float32)(src[rotBlock:])
		c := (*[rotBlock]float32)(src[2*rotBlock:])
		d := (*[3 * rotBlock]float32)(dst)
		for i := range rotBlock {
			d[3*i], d[3*i+1], d[3*i+2] = a[i], b[i], c[i]
		}
		return
	}
	if blocks <= maxInterleave {
		var rows [maxInterleave]*[rotBlock]float32
		for b := range blocks {
			rows[b] = (*[rotBlock]float32)(src[b*rotBlock:])
		}
		d := dst[:blocks*rotBlock]
		k := 0
		for i := range rotBlock {
			for _, r := range rows[:blocks] {
				d[k] = r[i]
				k++
			}
		}
		return
	}
	for i := range rotBlock {
		for b := range blocks {
			dst[i*blocks+b] = src[b*rotBlock+i]
		}
	}
}

// maxInterleave is the most blocks interleave reads through array pointers
// (d = 2,048).
const maxInterleave = 16

// fwhtRef is the unnormalised fast Walsh-Hadamard transform of one
// 128-float block, in place: stage h replaces each pair (a[j], a[j+h]) by
// (a[j]+a[j+h], a[j]-a[j+h]). Stages 1 and 2 run as one radix-4 pass. Any
// grouping of the stages computes each output as the same sum or difference
// of the same operands, so fwht (SIMD) and fwhtRef agree bit for bit.
func fwhtRef(b []float32) {
	a := (*[rotBlock]float32)(b)
	for i := 0; i < rotBlock; i += 4 {
		x0, x1, x2, x3 := a[i], a[i+1], a[i+2], a[i+3]
		s0, d0, s1, d1 := x0+x1, x0-x1, x2+x3, x2-x3
		a[i], a[i+1], a[i+2], a[i+3] = s0+s1, d0+d1, s0-s1, d0-d1
	}
	for h := 4; h < rotBlock; h *= 2 {
		for i := 0; i < rotBlock; i += 2 * h {
			for j := i; j < i+h; j += 4 {
				x0, x1, x2, x3 := a[j], a[j+1], a[j+2], a[j+3]
				y0, y1, y2, y3 := a[j+h], a[j+h+1], a[j+h+2], a[j+h+3]
				a[j], a[j+1], a[j+2], a[j+3] = x0+y0, x1+y1, x2+y2, x3+y3
				a[j+h], a[j+h+1], a[j+h+2], a[j+h+3] = x0-y0, x1-y1, x2-y2, x3-y3
			}
		}
	}
}

// maxAbs returns the largest |x| of v, NaN if v holds a NaN. It compares
// bit patterns: with the sign cleared, a float32's bits order as its
// magnitude does (a NaN's above every other), and an integer max needs no
// branch.
func maxAbs(v []float32) float32 {
	const nosign, inf = 0x7fffffff, 0x7f800000
	var m0, m1, m2, m3 uint32
	i := 0
	for ; i+4 <= len(v); i += 4 {
		m0 = max(m0, math.Float32bits(v[i])&nosign)
		m1 = max(m1, math.Float32bits(v[i+1])&nosign)
		m2 = max(m2, math.Float32bits(v[i+2])&nosign)
		m3 = max(m3, math.Float32bits(v[i+3])&nosign)
	}
	for ; i < len(v); i++ {
		m0 = max(m0, math.Float32bits(v[i])&nosign)
	}
	m := max(m0, m1, m2, m3)
	if m > inf {
		return float32(math.NaN())
	}
	return math.Float32frombits(m)
}

// roundHalfAway is int(math.Round(float64(x))) for a finite x, without
// math.Round's bit surgery: a float32 widened to float64 plus or minus 0.5
// is exact (a float32 below n+0.5 lies at least 2⁻²⁵ below it, far above
// float64's rounding), and the conversion truncates.
func roundHalfAway(x float32) int {
	// Copysign instead of a branch on the sign, which the CPU cannot
	// predict: the same integers.
	f := float64(x)
	return int(f + math.Copysign(0.5, f))
}
