package vecmath

import (
	"math"
	"slices"
	"testing"
)

// TestDotColumnsSameBits: DotColumns gives the reference's bits, on every
// path, for every width (whole blocks of 32 and the columns after them)
// and values whose sums round differently in another order.
func TestDotColumnsSameBits(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := newRand(31)
		for _, n := range []int{0, 1, 7, 8, 31, 32, 33, 64, 100, 128, 161} {
			for _, rows := range []int{0, 1, 5, 512} {
				m := randVec(r, rows*n)
				x := randVec(r, rows)
				for i := range m {
					m[i] *= float32(math.Pow(10, float64(i%7-3))) // magnitudes that round away
				}
				if rows > 2 && n > 3 {
					m[3], x[1] = float32(math.Copysign(0, -1)), 1e-40 // -0 and a subnormal
				}
				got, want := make([]float32, n), make([]float32, n)
				DotColumns(got, m, x)
				DotColumnsRef(want, m, x)
				if !slices.EqualFunc(got, want, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
					t.Fatalf("n %d rows %d: %v, want the bits of %v", n, rows, got, want)
				}
				if rows > 0 && n > 0 && got[n-1] != dotColumnRef(m, x, n, n-1) {
					t.Fatalf("n %d rows %d: last column %v", n, rows, got[n-1])
				}
			}
		}
	})
}

// TestDotColumnsOrder: the sum runs in row order (a reordered sum of these
// values differs).
func TestDotColumnsOrder(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		x := []float32{1, 1, 1}
		m := make([]float32, 3*32)
		for i := range 32 {
			m[i], m[32+i], m[64+i] = 1e8, 1, -1e8 // (1e8+1)-1e8 = 0 in float32; 1e8-1e8+1 = 1
		}
		out := make([]float32, 32)
		DotColumns(out, m, x)
		for i, v := range out {
			if v != 0 {
				t.Fatalf("column %d: %v, want 0 (rows summed in order)", i, v)
			}
		}
	})
}

func TestAddScaledInt8SameBits(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := newRand(32)
		for _, n := range []int{0, 1, 7, 8, 9, 64, 512, 515} {
			row := make([]int8, n+3)
			for i := range row {
				row[i] = int8(r.IntN(256) - 128)
			}
			acc := randVec(r, n)
			want := slices.Clone(acc)
			for _, scale := range []float32{0.013, -3.7e-3, 1e-39} {
				AddScaledInt8(acc, row, scale)
				AddScaledInt8Ref(want, row, scale)
			}
			for i := range acc {
				if math.Float32bits(acc[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n %d, sum %d: %v, want %v", n, i, acc[i], want[i])
				}
			}
		}
	})
}

func TestRoundedPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"short matrix": func() { DotColumns(make([]float32, 4), make([]float32, 7), make([]float32, 2)) },
		"short row":    func() { AddScaledInt8(make([]float32, 4), make([]int8, 3), 1) },
	} {
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

func BenchmarkDotColumns(b *testing.B) {
	r := newRand(33)
	m, x, out := randVec(r, 512*128), randVec(r, 512), make([]float32, 128)
	b.Run("simd", func(b *testing.B) {
		for b.Loop() {
			DotColumns(out, m, x)
		}
	})
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			DotColumnsRef(out, m, x)
		}
	})
}
