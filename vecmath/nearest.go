package vecmath

import "math"

// Nearest returns the row with the maximum dot with q among rows [0, n) of
// arena for which skip(i) is false (skip may be nil), and that dot. Ties go to
// the lower row; a row whose dot is NaN never qualifies. It returns
// (-1, -Inf) when no row qualifies. It panics unless len(q) == dim and
// len(arena) >= n*dim.
func Nearest(q, arena []float32, dim, n int, skip func(i int) bool) (int, float32) {
	return nearest(q, arena, dim, n, skip, Dot)
}

// NearestRef is the scalar reference for Nearest, built on DotRef. Its result
// is bit-identical on every platform.
func NearestRef(q, arena []float32, dim, n int, skip func(i int) bool) (int, float32) {
	return nearest(q, arena, dim, n, skip, DotRef)
}

func nearest(q, arena []float32, dim, n int, skip func(i int) bool, dot func(a, b []float32) float32) (int, float32) {
	checkArena(len(q), len(arena), dim, n)
	best, bestDot := -1, float32(math.Inf(-1))
	for i := range n {
		if skip != nil && skip(i) {
			continue
		}
		d := dot(q, arena[i*dim:(i+1)*dim])
		// The second clause lets a first row at -Inf qualify; NaN fails both.
		if d > bestDot || (best < 0 && d == d) {
			best, bestDot = i, d
		}
	}
	return best, bestDot
}
