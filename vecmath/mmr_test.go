package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMMRCases(t *testing.T) {
	// Candidates 0 and 1 point the same way; 2 is orthogonal to both.
	e0, e1 := []float32{1, 0}, []float32{0, 1}
	vecs := [][]float32{e0, e0, e1, e0}
	rel := []float64{0.9, 0.8, 0.5, 0.7}
	cases := []struct {
		name      string
		rel       []float64
		vecs      [][]float32
		k         int
		diversity float64
		pinned    int
		want      []int
	}{
		{"empty", nil, nil, 3, 0.5, 0, []int{}},
		{"k zero", rel, vecs, 0, 0.5, 0, []int{}},
		{"k at len returns all in order", rel, vecs, 4, 0.5, 0, []int{0, 1, 2, 3}},
		{"k above len returns all in order", rel, vecs, 9, 1, 3, []int{0, 1, 2, 3}},
		{"no diversity is relevance order", rel, vecs, 3, 0, 0, []int{0, 1, 3}},
		{"diversity prefers the orthogonal one", rel, vecs, 2, 0.5, 0, []int{0, 2}},
		{"full diversity ignores relevance", rel, vecs, 3, 1, 0, []int{0, 2, 1}},
		{"candidate 0 first even when least relevant", []float64{0.1, 0.9, 0.8}, [][]float32{e0, e1, e1}, 2, 0, 0, []int{0, 1}},
		{"pinned go first in order", rel, vecs, 3, 0.5, 2, []int{0, 1, 2}},
		{"pinned above k is cut at k", rel, vecs, 2, 0.5, 3, []int{0, 1}},
		{"negative pinned acts as 1", rel, vecs, 2, 0.5, -4, []int{0, 2}},
		{"ties go to the lower index", []float64{1, 0.5, 0.5, 0.5}, [][]float32{e0, e1, e1, e1}, 3, 0.3, 0, []int{0, 1, 2}},
		{"NaN relevance never picked", []float64{1, nanF, 0.2, 0.1}, vecs, 3, 0, 0, []int{0, 2, 3}},
		{"only NaN left returns fewer", []float64{1, nanF, nanF, 0.1}, vecs, 3, 0, 0, []int{0, 3}},
		{"NaN vector never picked after pick 1", rel, [][]float32{e0, {nan, 0}, e1, e0}, 3, 0.5, 0, []int{0, 2, 3}},
		{"NaN pinned vector leaves nothing pickable", rel, [][]float32{e0, {nan, 0}, e1, e0}, 3, 0.5, 2, []int{0, 1}},
		{"diversity above 1 clamps", rel, vecs, 3, 7, 0, []int{0, 2, 1}},
		{"NaN diversity acts as 0", rel, vecs, 3, nanF, 0, []int{0, 1, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := MMR(c.rel, c.vecs, c.k, c.diversity, c.pinned); !slices.Equal(got, c.want) {
				t.Errorf("MMR = %v, want %v", got, c.want)
			}
			if got := MMRRef(c.rel, c.vecs, c.k, c.diversity, c.pinned); !slices.Equal(got, c.want) {
				t.Errorf("MMRRef = %v, want %v", got, c.want)
			}
		})
	}
}

// randCandidates builds n ranked candidates; with dup, vectors and relevances
// repeat so that MMR scores tie.
func randCandidates(r *rand.Rand, n, dim int, dup bool) ([]float64, [][]float32) {
	rel := make([]float64, n)
	vecs := make([][]float32, n)
	for i := range n {
		if dup && i > 0 && r.IntN(3) == 0 {
			j := r.IntN(i)
			rel[i], vecs[i] = rel[j], vecs[j]
			continue
		}
		rel[i] = r.Float64()
		vecs[i] = randUnit(r, dim)
	}
	slices.SortStableFunc(rel, func(a, b float64) int { // ranked order, best first
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	return rel, vecs
}

func TestMMRMatchesRef(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := newRand(9)
		for _, dup := range []bool{false, true} {
			for _, n := range []int{1, 2, 5, 30, 120} {
				for _, k := range []int{1, 2, 5, 10, n - 1} {
					for _, div := range []float64{0, 0.3, 0.5, 1} {
						for _, pinned := range []int{0, 1, 3} {
							name := fmt.Sprintf("dup=%v/n=%d/k=%d/div=%v/pinned=%d", dup, n, k, div, pinned)
							rel, vecs := randCandidates(r, n, 16, dup)
							got := MMR(rel, vecs, k, div, pinned)
							want := MMRRef(rel, vecs, k, div, pinned)
							if !slices.Equal(got, want) {
								t.Fatalf("%s: MMR = %v, MMRRef = %v", name, got, want)
							}
							checkMMRShape(t, name, got, n, k, pinned)
						}
					}
				}
			}
		}
	})
}

// checkMMRShape checks what every MMR result must satisfy on finite input.
func checkMMRShape(t *testing.T, name string, got []int, n, k, pinned int) {
	t.Helper()
	if want := max(0, min(k, n)); len(got) != want {
		t.Fatalf("%s: %d picks, want %d", name, len(got), want)
	}
	for j := range min(max(pinned, 1), len(got)) {
		if got[j] != j {
			t.Fatalf("%s: pick %d is %d, want pinned candidate %d", name, j, got[j], j)
		}
	}
	seen := make(map[int]bool)
	for _, i := range got {
		if seen[i] || i < 0 || i >= n {
			t.Fatalf("%s: bad or repeated pick %d in %v", name, i, got)
		}
		seen[i] = true
	}
}

func TestMMRPanicsOnLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	MMR([]float64{1, 2}, [][]float32{{1}}, 1, 0.5, 0)
}

var nanF = math.NaN()
