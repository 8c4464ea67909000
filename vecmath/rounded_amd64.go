package vecmath

// dotColumns32AVX2 is DotColumns of columns [0, 32) of a matrix whose rows
// are stride floats apart (rounded_amd64.s); rows > 0.
//
//go:noescape
func dotColumns32AVX2(out, m, x *float32, rows, stride int)

// addScaledInt8AVX2 is AddScaledInt8 of n sums (rounded_amd64.s); n a
// positive multiple of 8.
//
//go:noescape
func addScaledInt8AVX2(acc *float32, row *int8, scale float32, n int)

// dotColumnsBlocks computes the columns of DotColumns in whole blocks of
// 32 with AVX2 and returns how many it did.
func dotColumnsBlocks(out, m, x []float32) int {
	n := len(out)
	if !accelerated || len(x) == 0 {
		return 0
	}
	done := 0
	for ; done+32 <= n; done += 32 {
		dotColumns32AVX2(&out[done], &m[done], &x[0], len(x), n)
	}
	return done
}

// addScaledInt8Blocks adds the sums of AddScaledInt8 in whole blocks of 8
// with AVX2 and returns how many it did.
func addScaledInt8Blocks(acc []float32, row []int8, scale float32) int {
	n := len(acc) &^ 7
	if !accelerated || n == 0 {
		return 0
	}
	addScaledInt8AVX2(&acc[0], &row[0], scale, n)
	return n
}
