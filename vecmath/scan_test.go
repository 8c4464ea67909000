package vecmath

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// randBytes returns n random bytes.
func randBytes(seed uint64, n int) []byte {
	r := newRand(seed)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// randLUT returns a lookup table of pairs*32 entries in [0, 120].
func randLUT(seed uint64, pairs int) []byte {
	r := newRand(seed)
	lut := make([]byte, 32*pairs)
	for i := range lut {
		lut[i] = byte(r.IntN(121))
	}
	return lut
}

func TestScanBitsMatchesReference(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for _, pairs := range []int{0, 1, 2, 7, 16, 48, 64, 255, 256} {
			for _, blocks := range []int{0, 1, 2, 5} {
				for _, pad := range []int{0, 32, 96} {
					t.Run(fmt.Sprintf("pairs=%d/blocks=%d/pad=%d", pairs, blocks, pad), func(t *testing.T) {
						stride := 32*pairs + pad
						seed := uint64(1000*pairs + 10*blocks + pad)
						lut := randLUT(seed, pairs)
						codes := randBytes(seed+1, blocks*stride)
						got := make([]uint16, 32*blocks+3)
						want := make([]uint16, 32*blocks+3)
						got[len(got)-1], want[len(want)-1] = 7, 7 // past the end: untouched
						ScanBits(lut, codes, blocks, pairs, stride, got)
						ScanBitsRef(lut, codes, blocks, pairs, stride, want)
						if !slices.Equal(got, want) {
							t.Fatalf("ScanBits differs from the reference:\n got %v\nwant %v", got, want)
						}
					})
				}
			}
		}
	})
}

func TestScanBitsExtremes(t *testing.T) {
	// Every entry at 120 over 256 pairs: the largest sum the kernel allows.
	forEachPath(t, func(t *testing.T) {
		lut := make([]byte, 32*maxScanPairs)
		for i := range lut {
			lut[i] = 120
		}
		codes := randBytes(5, 32*maxScanPairs*2)
		out := make([]uint16, 64)
		ScanBits(lut, codes, 2, maxScanPairs, 32*maxScanPairs, out)
		for r, s := range out {
			if s != 240*maxScanPairs {
				t.Fatalf("row %d: sum %d, want %d", r, s, 240*maxScanPairs)
			}
		}
	})
}

func TestScanBitsPanics(t *testing.T) {
	cases := []struct {
		name                  string
		lut, codes            int
		blocks, pairs, stride int
		out                   int
	}{
		{"too many pairs", 32 * 257, 32 * 257, 1, 257, 32 * 257, 32},
		{"short lut", 31, 32, 1, 1, 32, 32},
		{"short codes", 32, 63, 2, 1, 32, 64},
		{"stride below a block", 64, 128, 2, 2, 32, 64},
		{"short out", 32, 32, 1, 1, 32, 31},
		{"negative blocks", 32, 32, -1, 1, 32, 32},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			ScanBits(make([]byte, c.lut), make([]byte, c.codes), c.blocks, c.pairs, c.stride, make([]uint16, c.out))
		})
	}
}

func TestDotInt4RowsMatchesReference(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for _, dim := range []int{0, 64, 128, 384, 512, 1024} {
			for _, n := range []int{0, 1, 3, 17} {
				t.Run(fmt.Sprintf("dim=%d/rows=%d", dim, n), func(t *testing.T) {
					r := newRand(uint64(dim + n))
					q := make([]int8, dim)
					for i := range q {
						q[i] = int8(r.IntN(255) - 127)
					}
					total := 40
					codes := randBytes(uint64(dim*7+n), total*dim/2)
					rows := make([]int32, n)
					for j := range rows {
						rows[j] = int32(r.IntN(total))
					}
					got, want := make([]int32, n+1), make([]int32, n+1)
					got[n], want[n] = 9, 9
					DotInt4Rows(q, codes, rows, got)
					DotInt4RowsRef(q, codes, rows, want)
					if !slices.Equal(got, want) {
						t.Fatalf("DotInt4Rows differs from the reference:\n got %v\nwant %v", got, want)
					}
				})
			}
		}
	})
}

func TestDotInt4RowsExtremes(t *testing.T) {
	// Nibbles at 15 against ±127: the largest magnitudes the kernel allows.
	forEachPath(t, func(t *testing.T) {
		const dim = 1024
		codes := make([]byte, dim/2)
		for i := range codes {
			codes[i] = 0xff
		}
		for _, v := range []int8{127, -127} {
			q := make([]int8, dim)
			for i := range q {
				q[i] = v
			}
			out := make([]int32, 1)
			DotInt4Rows(q, codes, []int32{0}, out)
			if want := int32(v) * 15 * dim; out[0] != want {
				t.Fatalf("q=%d: got %d, want %d", v, out[0], want)
			}
		}
	})
}

func TestDotInt4RowsPanics(t *testing.T) {
	cases := []struct {
		name  string
		q     int
		codes int
		rows  []int32
		out   int
	}{
		{"query not a multiple of 64", 65, 64, []int32{0}, 1},
		{"row past the end", 64, 64, []int32{2}, 1},
		{"negative row", 64, 64, []int32{-1}, 1},
		{"short out", 64, 64, []int32{0, 1}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			DotInt4Rows(make([]int8, c.q), make([]byte, c.codes), c.rows, make([]int32, c.out))
		})
	}
}

func TestScanEstMatchesReference(t *testing.T) {
	if !hardwareSIMD {
		t.Skip("CPU has no AVX2: both paths are the reference")
	}
	for _, wide := range []bool{false, true} {
		t.Run(fmt.Sprintf("avx512=%v", wide), func(t *testing.T) {
			if wide && !hardwareAVX512 {
				t.Skip("CPU has no AVX-512")
			}
			hasAVX512 = wide
			t.Cleanup(func() { hasAVX512 = hardwareAVX512 })
			for _, pairs := range []int{1, 2, 3, 7, 16, 48, 128} {
				for _, blocks := range []int{1, 2, 3, 4, 7} {
					for _, gap := range []int{0, 64} {
						t.Run(fmt.Sprintf("pairs=%d/blocks=%d/gap=%d", pairs, blocks, gap), func(t *testing.T) {
							checkScanEst(t, pairs, blocks, 32*pairs+gap)
						})
					}
				}
			}
		})
	}
}

// checkScanEst compares scanEst with scanEstRef on random codes, blocks
// stride bytes apart.
func checkScanEst(t *testing.T, pairs, blocks, stride int) {
	seed := uint64(97*pairs + blocks + stride)
	lut := randLUT(seed, pairs)
	codes := randBytes(seed+1, (blocks-1)*stride+32*pairs)
	r := newRand(seed + 2)
	n := 32 * blocks
	c1, sd1 := make([]float32, n), make([]float32, n)
	for i := range c1 {
		c1[i], sd1[i] = r.Float32()*0.1, r.Float32()*0.05
	}
	c1[0], sd1[0] = 0, 0 // a zero row
	k := &estConsts{a5: int32(r.IntN(60 * pairs)), s5: 0.0123, e1: 4.01, k1: 0.27}
	ub, bmax := make([]float32, n), make([]float32, blocks)
	wantUB, wantMax := make([]float32, n), make([]float32, blocks)
	scanEst(lut, wideLUT(lut, pairs, nil), codes, blocks, pairs, stride, c1, sd1, k, ub, bmax, make([]uint16, n))
	scanEstRef(lut, codes, blocks, pairs, stride, c1, sd1, k, nil, wantUB, wantMax, make([]uint16, n))
	for i := range ub {
		if math.Float32bits(ub[i]) != math.Float32bits(wantUB[i]) {
			t.Fatalf("row %d: kernel %v, reference %v", i, ub[i], wantUB[i])
		}
	}
	if !slices.Equal(bmax, wantMax) {
		t.Fatalf("block maxima: kernel %v, reference %v", bmax, wantMax)
	}
}

func TestFilterGE(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 7, 8, 9, 64, 100, 1003} {
			t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
				r := newRand(uint64(n))
				v := make([]float32, n)
				for i := range v {
					v[i] = r.Float32()
				}
				if n > 3 {
					v[1], v[2], v[3] = nan, inf, ninf
				}
				for _, th := range []float32{0, 0.5, 0.97, 1, ninf} {
					got := filterGE(v, th, 1000, []int32{-1})
					want := filterGERef(v, th, 1000, []int32{-1})
					if !slices.Equal(got, want) {
						t.Fatalf("t=%v: got %v, want %v", th, got, want)
					}
				}
			})
		}
	})
}

// TestFilterBlocksGE checks the block-skipping filter against filterGERef
// with block maxima as the scan leaves them: exact, above the bounds (a
// scan's bound of padding rows), or NaN (a NaN bound in the block).
func TestFilterBlocksGE(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for _, n := range []int{0, 5, 32, 33, 200, 1000} {
			r := newRand(uint64(n) + 3)
			v := make([]float32, n)
			for i := range v {
				v[i] = r.Float32()
				if r.IntN(50) == 0 {
					v[i] = nan
				}
			}
			bmax := make([]float32, (n+blockRows-1)/blockRows)
			for b := range bmax {
				m := float32(math.Inf(-1))
				for _, x := range v[b*blockRows : min((b+1)*blockRows, n)] {
					if x != x {
						m = nan
						break
					}
					m = max(m, x)
				}
				if b%3 == 1 {
					m += 0.01 // a looser bound
				}
				bmax[b] = m
			}
			for _, th := range append([]float32{ninf, 0, 0.5, 0.99, 1}, v[:min(n, 8)]...) {
				got := filterBlocksGE(v, bmax, th, 7, []int32{-1})
				want := filterGERef(v, th, 7, []int32{-1})
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d t=%v: got %v, want %v", n, th, got, want)
				}
			}
		}
	})
}

func TestFWHTMatchesReference(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := newRand(77)
		for rep := range 20 {
			a := randVec(r, rotBlock)
			if rep == 0 {
				a[5], a[77] = nan, inf
			}
			want := slices.Clone(a)
			fwhtRef(want)
			fwht(a)
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(want[i]) {
					t.Fatalf("rep %d: element %d = %v, want %v", rep, i, a[i], want[i])
				}
			}
		}
		// The transform of a unit impulse is all ones.
		a := make([]float32, rotBlock)
		a[0] = 1
		fwht(a)
		for i, x := range a {
			if x != 1 {
				t.Fatalf("impulse: element %d = %v", i, x)
			}
		}
	})
}
