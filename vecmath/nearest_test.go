package vecmath

import (
	"fmt"
	"math"
	"testing"
)

// argmaxOf is the expected Nearest result over precomputed dots.
func argmaxOf(dots []float32, skip func(int) bool) (int, float32) {
	best, bestDot := -1, float32(math.Inf(-1))
	for i, d := range dots {
		if (skip != nil && skip(i)) || d != d {
			continue
		}
		if best < 0 || d > bestDot {
			best, bestDot = i, d
		}
	}
	return best, bestDot
}

func TestNearestRandom(t *testing.T) {
	skips := map[string]func(int) bool{
		"nil":   nil,
		"evens": func(i int) bool { return i%2 == 0 },
		"first": func(i int) bool { return i == 0 },
		"all":   func(int) bool { return true },
	}
	forEachPath(t, func(t *testing.T) {
		r := newRand(8)
		for _, dim := range []int{1, 7, 32, 33, 384} {
			for _, n := range []int{0, 1, 2, 50} {
				for name, skip := range skips {
					t.Run(fmt.Sprintf("dim=%d/n=%d/skip=%s", dim, n, name), func(t *testing.T) {
						q := randUnit(r, dim)
						arena := make([]float32, 0, n*dim)
						for range n {
							arena = append(arena, randUnit(r, dim)...)
						}
						dots, refs := make([]float32, n), make([]float32, n)
						DotArena(q, arena, dim, dots)
						DotArenaRef(q, arena, dim, refs)

						wi, wd := argmaxOf(dots, skip)
						if i, d := Nearest(q, arena, dim, n, skip); i != wi || d != wd {
							t.Fatalf("Nearest = (%d, %v), want (%d, %v)", i, d, wi, wd)
						}
						ri, rd := argmaxOf(refs, skip)
						if i, d := NearestRef(q, arena, dim, n, skip); i != ri || d != rd {
							t.Fatalf("NearestRef = (%d, %v), want (%d, %v)", i, d, ri, rd)
						}
					})
				}
			}
		}
	})
}

func TestNearestCases(t *testing.T) {
	q := []float32{1, 0}
	cases := []struct {
		name    string
		arena   []float32
		skip    func(int) bool
		wantIdx int
		wantDot float32
	}{
		{"no rows", nil, nil, -1, ninf},
		{"all skipped", []float32{1, 0, 0, 1}, func(int) bool { return true }, -1, ninf},
		{"tie goes to the lower row", []float32{0, 1, 1, 0, 1, 0}, nil, 1, 1},
		{"skip moves to the duplicate", []float32{0, 1, 1, 0, 1, 0}, func(i int) bool { return i == 1 }, 2, 1},
		{"NaN row never selected", []float32{nan, 0, 0.5, 0}, nil, 1, 0.5},
		{"only NaN rows", []float32{nan, 0, nan, 1}, nil, -1, ninf},
		{"-Inf row qualifies", []float32{ninf, 0, nan, 0}, nil, 0, ninf},
		{"+Inf row wins", []float32{1, 0, inf, 0}, nil, 1, inf},
		{"Inf times zero is NaN", []float32{0, inf, -1, 0}, nil, 1, -1},
		{"zero vectors", []float32{0, 0, 0, 0}, nil, 0, 0},
	}
	forEachPath(t, func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				n := len(c.arena) / 2
				for name, fn := range map[string]func(q, arena []float32, dim, n int, skip func(int) bool) (int, float32){
					"Nearest": Nearest, "NearestRef": NearestRef,
				} {
					i, d := fn(q, c.arena, 2, n, c.skip)
					if i != c.wantIdx || d != c.wantDot {
						t.Errorf("%s = (%d, %v), want (%d, %v)", name, i, d, c.wantIdx, c.wantDot)
					}
				}
			})
		}
	})
}

func TestNearestDimZero(t *testing.T) {
	i, d := Nearest(nil, nil, 0, 3, func(i int) bool { return i == 0 })
	if i != 1 || d != 0 {
		t.Fatalf("Nearest with dim 0 = (%d, %v), want (1, 0)", i, d)
	}
}
