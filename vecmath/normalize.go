package vecmath

import "math"

// Normalize scales v in place to unit L2 norm and returns its original norm.
// A zero vector, or one holding NaN or ±Inf, is left as all zeros and 0 is
// returned.
//
// The norm is accumulated in float64, so neither tiny (subnormal) nor huge
// components lose precision or overflow; it is returned rounded to float32,
// which is +Inf for the rare finite vector whose norm exceeds MaxFloat32 (the
// vector is still normalised). Normalize runs once per stored or queried
// vector, so it stays scalar and is its own reference.
func Normalize(v []float32) float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	norm := math.Sqrt(ss)
	if norm == 0 || math.IsInf(norm, 0) || math.IsNaN(norm) {
		clear(v)
		return 0
	}
	for i, x := range v {
		v[i] = float32(float64(x) / norm)
	}
	return float32(norm)
}
