package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTopKCases(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	cases := []struct {
		name   string
		scores []float32
		k      int
		want   []int
	}{
		{"empty", nil, 3, []int{}},
		{"k zero", []float32{1, 2}, 0, []int{}},
		{"k negative", []float32{1, 2}, -1, []int{}},
		{"descending order", []float32{0.1, 0.9, 0.5, 0.7}, 2, []int{1, 3}},
		{"k above len returns all", []float32{0.1, 0.9, 0.5}, 10, []int{1, 2, 0}},
		{"ties go to the lower index", []float32{0.5, 0.9, 0.5, 0.9, 0.5}, 4, []int{1, 3, 0, 2}},
		{"tie at the cut", []float32{0.5, 0.5, 0.5, 0.5}, 2, []int{0, 1}},
		{"NaN never selected", []float32{nan, 0.1, nan, -5}, 10, []int{1, 3}},
		{"all NaN", []float32{nan, nan}, 1, []int{}},
		{"NaN first then fill", []float32{nan, 1, 2, 3}, 2, []int{3, 2}},
		{"Inf ranks", []float32{0, ninf, inf, 1}, 4, []int{2, 3, 0, 1}},
		{"-0 ties +0", []float32{negZero, 0, negZero}, 3, []int{0, 1, 2}},
		{"k one", []float32{3, 1, 4, 1, 5, 9, 2, 6}, 1, []int{5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := TopK(c.scores, c.k, nil); !slices.Equal(got, c.want) {
				t.Errorf("TopK = %v, want %v", got, c.want)
			}
			if got := TopKRef(c.scores, c.k); !slices.Equal(got, c.want) {
				t.Errorf("TopKRef = %v, want %v", got, c.want)
			}
		})
	}
}

// randScores draws n scores from a distribution picked by kind: continuous,
// few distinct values (many ties), or mixed with NaN, ±Inf and ±0.
func randScores(r *rand.Rand, n int, kind string) []float32 {
	s := make([]float32, n)
	for i := range s {
		switch kind {
		case "ties":
			s[i] = float32(r.IntN(5)) / 4
		case "special":
			switch r.IntN(8) {
			case 0:
				s[i] = nan
			case 1:
				s[i] = inf
			case 2:
				s[i] = ninf
			case 3:
				s[i] = float32(math.Copysign(0, -1))
			case 4:
				s[i] = 0
			default:
				s[i] = float32(r.IntN(3))
			}
		default:
			s[i] = r.Float32()*2 - 1
		}
	}
	return s
}

func TestTopKMatchesRef(t *testing.T) {
	r := newRand(6)
	for _, kind := range []string{"uniform", "ties", "special"} {
		for _, n := range []int{0, 1, 2, 3, 10, 100, 1000, 5000} {
			for _, k := range []int{1, 2, 3, 10, 64, n, n + 1} {
				t.Run(fmt.Sprintf("%s/n=%d/k=%d", kind, n, k), func(t *testing.T) {
					scores := randScores(r, n, kind)
					want := TopKRef(scores, k)
					dst := make([]int, 7) // junk in dst must be overwritten
					if got := TopK(scores, k, dst); !slices.Equal(got, want) {
						t.Fatalf("TopK = %v, want %v", got, want)
					}
				})
			}
		}
	}
}

func TestTopKNoAllocWithDst(t *testing.T) {
	scores := randScores(newRand(7), 10_000, "uniform")
	dst := make([]int, 0, 10)
	allocs := testing.AllocsPerRun(20, func() { dst = TopK(scores, 10, dst) })
	if allocs != 0 {
		t.Fatalf("TopK allocated %v times with a large enough dst", allocs)
	}
}
