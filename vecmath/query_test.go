package vecmath

import (
	"math"
	"slices"
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

// buildLUTRef is buildLUT entry by entry (each entry the one before it
// plus 2q): it fills the stage-1 tables: for nibble position p (coordinates
// 4p..4p+3) and pattern x, the sum over t of q5[4p+t] if bit t of x is set
// (the row's coordinate is >= 0) and -q5[4p+t] otherwise, plus
// sum |q5[4p+t]| so that entries are in [0, 120]. Setting bit t adds
// 2*q5[4p+t] to the entry without it.
func (cq *codeQuery) buildLUTRef() {
	for p := range len(cq.q5) / 4 {
		lut := (*[16]byte)(cq.lut[32*(p/2)+16*(p%2):])
		q := (*[4]int8)(cq.q5[4*p:])
		var e0 int
		for _, v := range q {
			e0 += max(int(v), -int(v)) - int(v)
		}
		// Entries 2^t..2^(t+1)-1 are entries 0..2^t-1 with bit t set.
		lut[0] = byte(e0)
		for t, n := 0, 1; t < 4; t, n = t+1, 2*n {
			d := byte(2 * int(q[t])) // wraps; every sum lands in [0, 120]
			for x := range n {
				lut[n+x] = lut[x] + d
			}
		}
	}
}

// TestBuildLUTMatchesReference: the word-wise tables equal the
// entry-by-entry ones, for random quantised queries and the extremes.
func TestBuildLUTMatchesReference(t *testing.T) {
	r := newRand(3)
	for trial := range 50 {
		cq := newCodeQuery(384)
		for i := range cq.q5 {
			switch trial {
			case 0:
				cq.q5[i] = q5Levels
			case 1:
				cq.q5[i] = -q5Levels
			default:
				cq.q5[i] = int8(r.IntN(2*q5Levels+1) - q5Levels)
			}
		}
		cq.buildLUT()
		got := slices.Clone(cq.lut)
		cq.buildLUTRef()
		if !slices.Equal(got, cq.lut) {
			t.Fatalf("trial %d: tables differ", trial)
		}
	}
}
