package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
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
	scale     float32 // (1/sqrt(rotBlock))^rotRounds
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
		for j, s := range q.signs[k] {
			out[j] *= s
		}
		for b := range blocks {
			fwht(out[b*rotBlock : (b+1)*rotBlock])
		}
		if blocks > 1 {
			// Element i of block b moves to i*blocks+b, so the next round's
			// blocks mix coordinates of every block.
			for b := range blocks {
				for i, x := range out[b*rotBlock : (b+1)*rotBlock] {
					tmp[i*blocks+b] = x
				}
			}
			copy(out, tmp)
		}
	}
	for j := range out {
		out[j] *= q.scale
	}
}

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

// maxAbs returns the largest |x| of v, NaN if v holds a NaN.
func maxAbs(v []float32) float32 {
	var m float32
	for _, x := range v {
		if x != x {
			return x
		}
		m = max(m, float32(math.Abs(float64(x))))
	}
	return m
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

// quantizeTo writes round(v[j]/step) into out, clamped to [-levels, levels],
// and returns the sum of the integers and of their absolute values. A zero or
// non-finite step gives zeros.
func quantizeTo[T int8 | int32](v []float32, step float32, levels int, out []T) (sum, sumAbs int32) {
	ok := step > 0 && !math.IsInf(float64(step), 0)
	for j, x := range v {
		var k int
		if ok {
			k = max(-levels, min(levels, roundHalfAway(x/step)))
		}
		out[j] = T(k)
		sum += int32(k)
		sumAbs += int32(max(k, -k))
	}
	return sum, sumAbs
}
