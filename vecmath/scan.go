package vecmath

import (
	"fmt"
	"math"
)

// maxScanPairs bounds the nibble pairs one scanBits call may sum: every
// lookup pair adds at most 240, and the kernel's 16-bit sums must not wrap.
const maxScanPairs = 256

// ScanBits is the fast-scan kernel of the 1-bit stage. codes holds blocks of
// 32 rows: block b starts at b*stride and its pair m is the 32 bytes at
// offset 32*m, byte r belonging to row r of the block. lut holds, per pair m,
// 16 entries for the low nibble then 16 for the high nibble. It writes
//
//	out[32*b+r] = sum over m < pairs of lut[32m+lo] + lut[32m+16+hi]
//
// where lo and hi are the nibbles of row r's byte of pair m, for every block
// b < blocks. Entries must not exceed 120 and pairs must not exceed 256 (so
// the sums fit 16 bits); len(out) must be at least 32*blocks. It uses AVX2
// when Accelerated and ScanBitsRef otherwise; both return the same integers.
func ScanBits(lut, codes []byte, blocks, pairs, stride int, out []uint16) {
	checkScan(lut, codes, blocks, pairs, stride, out)
	if blocks == 0 || pairs == 0 {
		clear(out[:blockRows*blocks])
		return
	}
	scanBits(lut, codes, blocks, pairs, stride, out)
}

// ScanBitsRef is the scalar reference of ScanBits.
func ScanBitsRef(lut, codes []byte, blocks, pairs, stride int, out []uint16) {
	checkScan(lut, codes, blocks, pairs, stride, out)
	scanBitsRef(lut, codes, blocks, pairs, stride, out)
}

func scanBitsRef(lut, codes []byte, blocks, pairs, stride int, out []uint16) {
	for b := range blocks {
		block := codes[b*stride:]
		for r := range blockRows {
			var s uint16
			for m := range pairs {
				x := block[32*m+r]
				s += uint16(lut[32*m+int(x&15)]) + uint16(lut[32*m+16+int(x>>4)])
			}
			out[blockRows*b+r] = s
		}
	}
}

func checkScan(lut, codes []byte, blocks, pairs, stride int, out []uint16) {
	switch {
	case blocks < 0 || pairs < 0 || pairs > maxScanPairs:
		panic(fmt.Sprintf("vecmath: scan of %d blocks of %d pairs", blocks, pairs))
	case len(lut) < 32*pairs:
		panic(fmt.Sprintf("vecmath: lut of %d bytes for %d pairs", len(lut), pairs))
	case blocks > 0 && (stride < 32*pairs || len(codes) < (blocks-1)*stride+32*pairs):
		panic(fmt.Sprintf("vecmath: %d code bytes for %d blocks of stride %d", len(codes), blocks, stride))
	case len(out) < blockRows*blocks:
		panic(fmt.Sprintf("vecmath: out holds %d sums, %d blocks requested", len(out), blocks))
	}
}

// DotInt4Rows is the kernel of the 4-bit stage: for each j it writes
//
//	out[j] = sum over i < len(q) of q[i] * code(row rows[j], i)
//
// where row r's codes are the rowBytes = len(q)/2 bytes at codes[r*rowBytes:]
// and, per 64 coordinates, byte i holds coordinate i in its low nibble and
// i+32 in its high nibble (unsigned, 0..15). len(q) must be a multiple of 64
// and every q[i] must lie in [-127, 127]. It uses AVX2 when Accelerated and
// DotInt4RowsRef otherwise; both return the same integers.
func DotInt4Rows(q []int8, codes []byte, rows []int32, out []int32) {
	checkInt4(q, codes, rows, out)
	if len(q) == 0 {
		clear(out[:len(rows)])
		return
	}
	dotInt4Rows(q, codes, rows, out)
}

// DotInt4RowsRef is the scalar reference of DotInt4Rows.
func DotInt4RowsRef(q []int8, codes []byte, rows []int32, out []int32) {
	checkInt4(q, codes, rows, out)
	dotInt4RowsRef(q, codes, rows, out)
}

func dotInt4RowsRef(q []int8, codes []byte, rows []int32, out []int32) {
	rb := len(q) / 2
	for j, r := range rows {
		row := codes[int(r)*rb : (int(r)+1)*rb]
		var s int32
		for ch := range len(q) / 64 {
			for i := range 32 {
				x := row[32*ch+i]
				s += int32(q[64*ch+i])*int32(x&15) + int32(q[64*ch+32+i])*int32(x>>4)
			}
		}
		out[j] = s
	}
}

func checkInt4(q []int8, codes []byte, rows []int32, out []int32) {
	if len(q)%64 != 0 {
		panic(fmt.Sprintf("vecmath: int4 query of length %d", len(q)))
	}
	if len(out) < len(rows) {
		panic(fmt.Sprintf("vecmath: out holds %d sums, %d rows requested", len(out), len(rows)))
	}
	rb := len(q) / 2
	for _, r := range rows {
		if r < 0 || (int(r)+1)*rb > len(codes) {
			panic(fmt.Sprintf("vecmath: int4 row %d outside %d code bytes", r, len(codes)))
		}
	}
}

// estConsts are the per-query constants of the stage-1 estimate, in the
// layout scanEstAVX2 reads.
type estConsts struct {
	a5         int32
	s5, e1, k1 float32
}

// scanEstRef is the reference of the fused stage-1 kernel: the scan sums of
// blocks 32-row blocks (into raw), then per row
//
//	est = c1 * (float32(sum-a5) * s5),  ub = est + (sd1*e1 + c1*k1)
//
// each operation rounded to float32, which is what the AVX2 kernel
// computes, and per block the largest upper bound in bmax. The kernel
// stores no estimate; est, when not nil, gets them here (for tests).
func scanEstRef(lut, codes []byte, blocks, pairs, stride int, c1, sd1 []float32, k *estConsts, est, ub, bmax []float32, raw []uint16) {
	scanBitsRef(lut, codes, blocks, pairs, stride, raw)
	for b := range blocks {
		m := float32(math.Inf(-1))
		for i := b * blockRows; i < (b+1)*blockRows; i++ {
			e, u := k.est(int32(raw[i]), c1[i], sd1[i])
			if est != nil {
				est[i] = e
			}
			ub[i] = u
			if u > m {
				m = u
			}
		}
		bmax[b] = m
	}
}

// wideLUT lays the tables of lut (pairs pairs, as ScanBits takes them)
// out for the AVX-512 scan into dst (grown as needed), 128 bytes per two
// pairs m and m+1: the low-nibble table of m twice, that of m+1 twice, then
// the high-nibble tables likewise, so that each 128-bit lane of 64 code
// bytes (pair m's 32, then pair m+1's) meets its own table. An odd last
// pair is not laid out.
func wideLUT(lut []byte, pairs int, dst []byte) []byte {
	n := 128 * (pairs / 2)
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	for j := range pairs / 2 {
		w, a, b := dst[128*j:], lut[64*j:], lut[64*j+32:]
		for half, t := range [2][]byte{a, b} {
			lo, hi := t[:16], t[16:32]
			copy(w[32*half:], lo)
			copy(w[32*half+16:], lo)
			copy(w[64+32*half:], hi)
			copy(w[64+32*half+16:], hi)
		}
	}
	return dst
}

// filterBlocksGE is filterGE over the rows of v, whose 32-row block b has
// no bound above bmax[b] (NaN bounds aside), skipping the blocks whose
// maximum is below t: the runs of blocks left go to filterGE whole. Most
// blocks hold no candidate (a search refines ~1% of its rows), and at a
// million rows the pass over every bound cost a tenth of the search.
// A NaN maximum is no proof and its block is filtered.
func filterBlocksGE(v, bmax []float32, t float32, base int32, out []int32) []int32 {
	for b := 0; b < len(bmax); {
		if bmax[b] < t {
			b++
			continue
		}
		e := b + 1
		for e < len(bmax) && !(bmax[e] < t) {
			e++
		}
		lo, hi := min(b*blockRows, len(v)), min(e*blockRows, len(v))
		out = filterGE(v[lo:hi], t, base+int32(lo), out)
		b = e
	}
	return out
}

// filterGERef appends base+i to out for every i with v[i] >= t.
func filterGERef(v []float32, t float32, base int32, out []int32) []int32 {
	for i, x := range v {
		if x >= t {
			out = append(out, base+int32(i))
		}
	}
	return out
}

// est is the stage-1 estimate of a row from its scan sum, and its upper
// bound. The conversions keep a compiler from fusing a multiply and an add:
// the result must be the same on every platform and equal the kernel's.
func (k *estConsts) est(sum int32, c1, sd1 float32) (est, ub float32) {
	t := float32(sum-k.a5) * k.s5
	est = c1 * t
	return est, est + (float32(sd1*k.e1) + float32(c1*k.k1))
}
