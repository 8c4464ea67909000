package vecmath

import "fmt"

// Kernels whose every product is rounded to float32 before it is added
// (no fused multiply-add) and whose sums run in a fixed order: their SIMD
// and scalar paths give the same bits on every platform, for callers that
// pin their output (the builtin embedder's vectors). They vectorise across
// independent sums, never within one.

// DotColumns sets out[i] to the dot product of x with column i of m, a
// len(x) by len(out) matrix stored row after row (row k is
// m[k*len(out):(k+1)*len(out)]): acc += float32(m[k][i]*x[k]) for k in
// order, from 0. It panics if m is shorter than len(x)*len(out).
func DotColumns(out, m, x []float32) {
	n := len(out)
	if len(m) < len(x)*n {
		panic(fmt.Sprintf("vecmath: matrix of %d floats for %d x %d", len(m), len(x), n))
	}
	done := dotColumnsBlocks(out, m, x)
	for i := done; i < n; i++ {
		out[i] = dotColumnRef(m, x, n, i)
	}
}

// DotColumnsRef is the scalar reference of DotColumns.
func DotColumnsRef(out, m, x []float32) {
	n := len(out)
	if len(m) < len(x)*n {
		panic(fmt.Sprintf("vecmath: matrix of %d floats for %d x %d", len(m), len(x), n))
	}
	for i := range out {
		out[i] = dotColumnRef(m, x, n, i)
	}
}

func dotColumnRef(m, x []float32, n, i int) float32 {
	var acc float32
	for k, c := range x {
		acc += float32(m[k*n+i] * c)
	}
	return acc
}

// AddScaledInt8 adds float32(scale*float32(row[k])) to acc[k] for every k
// of acc. It panics if row is shorter than acc.
func AddScaledInt8(acc []float32, row []int8, scale float32) {
	if len(row) < len(acc) {
		panic(fmt.Sprintf("vecmath: int8 row of %d for %d sums", len(row), len(acc)))
	}
	done := addScaledInt8Blocks(acc, row, scale)
	AddScaledInt8Ref(acc[done:], row[done:], scale)
}

// AddScaledInt8Ref is the scalar reference of AddScaledInt8.
func AddScaledInt8Ref(acc []float32, row []int8, scale float32) {
	row = row[:len(acc)]
	for k, q := range row {
		acc[k] += float32(scale * float32(q))
	}
}
