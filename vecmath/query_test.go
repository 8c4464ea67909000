package vecmath

import (
	"math"
	"testing"
)

func TestRoundHalfAway(t *testing.T) {
	xs := []float32{0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 126.5, -126.5, 1e-30, -1e-30}
	for _, x := range xs[:len(xs)-2] {
		xs = append(xs, math.Nextafter32(x, 200), math.Nextafter32(x, -200))
	}
	r := newRand(7)
	for range 100000 {
		xs = append(xs, float32(r.NormFloat64()*40))
	}
	for _, x := range xs {
		if got, want := roundHalfAway(x), int(math.Round(float64(x))); got != want {
			t.Fatalf("roundHalfAway(%v) = %d, math.Round gives %d", x, got, want)
		}
	}
}

// Every stage-1 table entry is its definition: the sum over the four
// coordinates of q5 signed by the pattern's bits, plus their sum of |q5|.
func TestBuildLUT(t *testing.T) {
	q := NewQuantizer(384)
	cq := newCodeQuery(q.pdim)
	r := newRand(8)
	for range 20 {
		if !cq.prepare(q, randUnit(r, 384)) {
			t.Fatal("prepare refused a unit vector")
		}
		for p := range len(cq.q5) / 4 {
			for x := range 16 {
				want := 0
				for b := range 4 {
					v := int(cq.q5[4*p+b])
					want += max(v, -v)
					if x&(1<<b) != 0 {
						want += v
					} else {
						want -= v
					}
				}
				if got := int(cq.lut[32*(p/2)+16*(p%2)+x]); got != want {
					t.Fatalf("position %d pattern %04b: entry %d, want %d", p, x, got, want)
				}
			}
		}
	}
}
