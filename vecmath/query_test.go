package vecmath

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestRoundHalfAway(t *testing.T) {
	xs := []float32{0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 126.5, -126.5, 1e-30, -1e-30}
	for _, x := range xs[:len(xs)-2] {
		xs = append(xs, math.Nextafter32(x, 200), math.Nextafter32(x, -200))
	}
	r := newRand(7)
	for range 100000 {
		xs = append(xs, float32(r.NormFloat64()*40))
	}
	for _, x := range xs {
		if got, want := roundHalfAway(x), int(math.Round(float64(x))); got != want {
			t.Fatalf("roundHalfAway(%v) = %d, math.Round gives %d", x, got, want)
		}
	}
}

// Every stage-1 table entry is its definition: the sum over the four
// coordinates of q5 signed by the pattern's bits, plus their sum of |q5|.
func TestBuildLUT(t *testing.T) {
	q := NewQuantizer(384)
	cq := newCodeQuery(q.pdim)
	r := newRand(8)
	for range 20 {
		if !cq.prepare(q, randUnit(r, 384)) {
			t.Fatal("prepare refused a unit vector")
		}
		for p := range len(cq.q5) / 4 {
			for x := range 16 {
				want := 0
				for b := range 4 {
					v := int(cq.q5[4*p+b])
					want += max(v, -v)
					if x&(1<<b) != 0 {
						want += v
					} else {
						want -= v
					}
				}
				if got := int(cq.lut[32*(p/2)+16*(p%2)+x]); got != want {
					t.Fatalf("position %d pattern %04b: entry %d, want %d", p, x, got, want)
				}
			}
		}
	}
}

// buildLUTRef is buildLUT entry by entry (each entry the one before it
// plus 2q): it fills the stage-1 tables: for nibble position p (coordinates
// 4p..4p+3) and pattern x, the sum over t of q5[4p+t] if bit t of x is set
// (the row's coordinate is >= 0) and -q5[4p+t] otherwise, plus
// sum |q5[4p+t]| so that entries are in [0, 120]. Setting bit t adds
// 2*q5[4p+t] to the entry without it.
func (cq *codeQuery) buildLUTRef() {
	for p := range len(cq.q5) / 4 {
		lut := (*[16]byte)(cq.lut[32*(p/2)+16*(p%2):])
		q := (*[4]int8)(cq.q5[4*p:])
		var e0 int
		for _, v := range q {
			e0 += max(int(v), -int(v)) - int(v)
		}
		// Entries 2^t..2^(t+1)-1 are entries 0..2^t-1 with bit t set.
		lut[0] = byte(e0)
		for t, n := 0, 1; t < 4; t, n = t+1, 2*n {
			d := byte(2 * int(q[t])) // wraps; every sum lands in [0, 120]
			for x := range n {
				lut[n+x] = lut[x] + d
			}
		}
	}
}

// TestBuildLUTMatchesReference: the word-wise tables equal the
// entry-by-entry ones, for random quantised queries and the extremes.
func TestBuildLUTMatchesReference(t *testing.T) {
	r := newRand(3)
	for trial := range 50 {
		cq := newCodeQuery(384)
		for i := range cq.q5 {
			switch trial {
			case 0:
				cq.q5[i] = q5Levels
			case 1:
				cq.q5[i] = -q5Levels
			default:
				cq.q5[i] = int8(r.IntN(2*q5Levels+1) - q5Levels)
			}
		}
		cq.buildLUT()
		got := slices.Clone(cq.lut)
		cq.buildLUTRef()
		if !slices.Equal(got, cq.lut) {
			t.Fatalf("trial %d: tables differ", trial)
		}
	}
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

// quantizeQuery gives what quantizeTo gives at each level.
func TestQuantizeQueryMatchesReference(t *testing.T) {
	q := NewQuantizer(384)
	cq := newCodeQuery(q.pdim)
	r := newRand(12)
	for n := range 200 {
		v := randUnit(r, 384)
		if n%3 == 0 {
			for i := range v {
				v[i] = float32(r.IntN(31)-15) / 15 // on and between rounding edges
			}
		}
		m := maxAbs(v)
		s5, s8 := m/q5Levels, m/q8Levels
		a5, sum8 := quantizeQuery(v, s5, s8, cq.q5, cq.q8)
		w5, w8 := make([]int8, len(v)), make([]int8, len(v))
		_, wa5 := quantizeTo(v, s5, q5Levels, w5)
		wsum8, _ := quantizeTo(v, s8, q8Levels, w8)
		if a5 != wa5 || sum8 != wsum8 || !slices.Equal(cq.q5[:len(v)], w5) || !slices.Equal(cq.q8[:len(v)], w8) {
			t.Fatalf("vector %d: quantizeQuery differs from quantizeTo", n)
		}
	}
}

func TestMaxAbs(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	cases := []struct {
		v    []float32
		want float32
	}{
		{nil, 0},
		{[]float32{negZero}, 0},
		{[]float32{-3}, 3},
		{[]float32{1, -2, 0.5, 1.5, -1.75}, 2},
		{[]float32{1, 2, 3, 4, 5, 6, 7, -8, 1}, 8},
		{[]float32{1, 2, 3, 4, 5, 6, 7, 8, -9}, 9}, // the remainder
		{[]float32{1, -inf, 3}, inf},
		{[]float32{1, 2, 3, 4, nan}, nan},
		{[]float32{inf, nan}, nan},
	}
	for _, c := range cases {
		got := maxAbs(c.v)
		if got != c.want && !(got != got && c.want != c.want) || math.Signbit(float64(got)) {
			t.Errorf("maxAbs(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	r := newRand(13)
	for range 100 {
		v := randVec(r, 1+r.IntN(500))
		var want float64
		for _, x := range v {
			want = math.Max(want, math.Abs(float64(x)))
		}
		if got := maxAbs(v); float64(got) != want {
			t.Fatalf("maxAbs = %v, want %v", got, want)
		}
	}
}

// interleave's unrolled path for three blocks moves what the general one
// moves.
func TestInterleave(t *testing.T) {
	src := make([]float32, 3*rotBlock)
	for i := range src {
		src[i] = float32(i)
	}
	dst := make([]float32, len(src))
	interleave(dst, src, 3)
	for b := range 3 {
		for i := range rotBlock {
			if dst[i*3+b] != src[b*rotBlock+i] {
				t.Fatalf("element %d of block %d at %d: %v", i, b, i*3+b, dst[i*3+b])
			}
		}
	}
	for _, blocks := range []int{2, 4, 7, 12, maxInterleave, maxInterleave + 1} {
		src, dst := make([]float32, blocks*rotBlock), make([]float32, blocks*rotBlock)
		for i := range src {
			src[i] = float32(i)
		}
		interleave(dst, src, blocks)
		for b := range blocks {
			for i := range rotBlock {
				if dst[i*blocks+b] != src[b*rotBlock+i] {
					t.Fatalf("%d blocks: element %d of block %d misplaced", blocks, i, b)
				}
			}
		}
	}
}

func BenchmarkInterleave(b *testing.B) {
	for _, blocks := range []int{3, 7} {
		src, dst := make([]float32, blocks*rotBlock), make([]float32, blocks*rotBlock)
		b.Run(fmt.Sprint("blocks=", blocks), func(b *testing.B) {
			for b.Loop() {
				interleave(dst, src, blocks)
			}
		})
	}
}
