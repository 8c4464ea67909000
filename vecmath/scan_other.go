//go:build !amd64

package vecmath

func scanBits(lut, codes []byte, blocks, pairs, stride int, out []uint16) {
	scanBitsRef(lut, codes, blocks, pairs, stride, out)
}

func dotInt4Rows(q []int8, codes []byte, rows []int32, out []int32) {
	dotInt4RowsRef(q, codes, rows, out)
}

func scanEst(lut, _, codes []byte, blocks, pairs, stride int, c1, sd1 []float32, k *estConsts, ub, bmax []float32, raw []uint16) {
	scanEstRef(lut, codes, blocks, pairs, stride, c1, sd1, k, nil, ub, bmax, raw)
}

func filterGE(v []float32, t float32, base int32, out []int32) []int32 {
	return filterGERef(v, t, base, out)
}

func fwht(a []float32) { fwhtRef(a) }

func dotFixed(a, b []float32) float64 { return dotFixedRef(a, b) }

// hasAVX512 is false: the AVX-512 kernels are amd64 only.
var hasAVX512 = false
