//go:build amd64

package vecmath

import (
	"os"
	"slices"
	"unsafe"

	"github.com/viterin/vek"
)

// scanBitsAVX2 is ScanBits in AVX2 (scan_amd64.s); blocks and pairs > 0.
//
//go:noescape
func scanBitsAVX2(lut, codes *byte, blocks, pairs, stride int, out *uint16)

// dotInt4RowsAVX2 is DotInt4Rows in AVX2 (scan_amd64.s); n and chunks > 0.
//
//go:noescape
func dotInt4RowsAVX2(q *int8, codes *byte, rowBytes int, rows *int32, n, chunks int, out *int32)

// scanEstAVX2 is scanEst in AVX2 (scan_amd64.s); blocks and pairs > 0.
//
//go:noescape
func scanEstAVX2(lut, codes *byte, blocks, pairs, stride int, c1, sd1 *float32, k *estConsts, ub, bmax *float32)

// scanEstAVX512 is scanEstAVX2 in AVX-512, two pairs at a time
// (scan_amd64.s), wide the tables of lut as wideLUT lays them out; blocks
// and pairs > 0; it needs AVX-512 F, BW and VL (hasAVX512).
//
//go:noescape
func scanEstAVX512(lut, wide, codes *byte, blocks, pairs, stride int, c1, sd1 *float32, k *estConsts, ub, bmax *float32)

// filterGEAVX2 is filterGE in AVX2 (scan_amd64.s); n a multiple of 8,
// room for n in out, perm filterPerm; it counts with POPCNT, which AVX2
// does not imply (hasPOPCNT).
//
//go:noescape
func filterGEAVX2(v *float32, n int, t float32, base int32, out *int32, perm *int32) int

// hasPOPCNT reports whether the CPU has POPCNT.
var hasPOPCNT = hasFeatures("POPCNT")

// hasAVX512 reports whether the CPU (and the OS, which must save the
// 512-bit registers) has the AVX-512 subsets scanEstAVX512 uses, and the
// environment does not turn them off (HEBB_NO_AVX512=1: the AVX2 kernels,
// for a side-by-side measurement in one binary, or a CPU that slows its
// clock for 512-bit work).
var hasAVX512 = hasFeatures("AVX512F", "AVX512BW", "AVX512VL") && os.Getenv("HEBB_NO_AVX512") == ""

// hasFeatures reports whether the CPU has every named feature.
func hasFeatures(names ...string) bool {
	have := vek.Info().CPUFeatures
	for _, n := range names {
		if !slices.Contains(have, n) {
			return false
		}
	}
	return true
}

// filterPerm[m] lists the lanes set in the 8-bit mask m, then the others:
// the permutation that packs the lanes m selects to the front.
var filterPerm = func() (p [256][8]int32) {
	for m := range p {
		k := 0
		for pass := range 2 {
			for l := range 8 {
				if (m>>l&1 == 1) == (pass == 0) {
					p[m][k] = int32(l)
					k++
				}
			}
		}
	}
	return p
}()

func scanEst(lut, wide, codes []byte, blocks, pairs, stride int, c1, sd1 []float32, k *estConsts, ub, bmax []float32, raw []uint16) {
	if !accelerated {
		scanEstRef(lut, codes, blocks, pairs, stride, c1, sd1, k, nil, ub, bmax, raw)
		return
	}
	if hasAVX512 && len(wide) >= 128*(pairs/2) {
		scanEstAVX512(&lut[0], unsafe.SliceData(wide), &codes[0], blocks, pairs, stride, &c1[0], &sd1[0], k, &ub[0], &bmax[0])
		return
	}
	scanEstAVX2(&lut[0], &codes[0], blocks, pairs, stride, &c1[0], &sd1[0], k, &ub[0], &bmax[0])
}

func filterGE(v []float32, t float32, base int32, out []int32) []int32 {
	n := len(v) &^ 7
	if accelerated && hasPOPCNT && n > 0 {
		out = slices.Grow(out, n)
		m := filterGEAVX2(&v[0], n, t, base, &out[len(out):cap(out)][0], &filterPerm[0][0])
		out = out[:len(out)+m]
		return filterGERef(v[n:], t, base+int32(n), out)
	}
	return filterGERef(v, t, base, out)
}

func scanBits(lut, codes []byte, blocks, pairs, stride int, out []uint16) {
	if accelerated {
		scanBitsAVX2(&lut[0], &codes[0], blocks, pairs, stride, &out[0])
		return
	}
	scanBitsRef(lut, codes, blocks, pairs, stride, out)
}

func dotInt4Rows(q []int8, codes []byte, rows []int32, out []int32) {
	if accelerated && len(rows) > 0 {
		dotInt4RowsAVX2(&q[0], &codes[0], len(q)/2, &rows[0], len(rows), len(q)/64, &out[0])
		return
	}
	dotInt4RowsRef(q, codes, rows, out)
}

// dotFixedAVX2 is dotFixedRef in AVX2 (scan_amd64.s); n a multiple of 16, > 0.
//
//go:noescape
func dotFixedAVX2(a, b *float32, n int) float64

func dotFixed(a, b []float32) float64 {
	if accelerated {
		return dotFixedAVX2(&a[0], &b[0], len(a))
	}
	return dotFixedRef(a, b)
}

// fwhtAVX2 is fwht in AVX (scan_amd64.s), on 128 floats.
//
//go:noescape
func fwhtAVX2(a *float32)

func fwht(a []float32) {
	if accelerated {
		fwhtAVX2(&a[:rotBlock][0])
		return
	}
	fwhtRef(a)
}
