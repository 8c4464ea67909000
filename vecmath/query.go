package vecmath

import (
	"encoding/binary"
	"math"
)

// codeQuery is a query prepared for both code stages.
type codeQuery struct {
	rot, tmp []float32
	lut      []byte    // stage 1: per pair, 16 entries per nibble position
	wide     []byte    // lut laid out for the AVX-512 scan (wideLUT), when it runs
	q5       []int8    // stage 1 quantised query, in [-15, 15]
	q8       []int8    // stage 2 quantised query, in [-127, 127]
	k        estConsts // stage 1: a5 = sum |q5| (a scan sum is sum(sign*q5) + a5), s5, bound constants
	sum8     int32     // sum q8
	s8       float32
	// Stage 2 bound constants, epsilon folded in: bound = s4*e4 + nrm*k4.
	e4, k4 float32
}

func newCodeQuery(pdim int) *codeQuery {
	return &codeQuery{rot: make([]float32, pdim), tmp: make([]float32, pdim),
		lut: make([]byte, 4*pdim), q5: make([]int8, pdim), q8: make([]int8, pdim)}
}

// prepare rotates and quantises vec. It returns false when the query is zero
// or not finite: the caller then scans exactly.
func (cq *codeQuery) prepare(q *Quantizer, vec []float32) bool {
	q.rotate(vec, cq.rot, cq.tmp)
	var ss float64
	for _, x := range cq.rot {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return false
	}
	qn := float32(math.Sqrt(ss))
	m := maxAbs(cq.rot)
	cq.k.s5 = m / q5Levels
	cq.s8 = m / q8Levels
	if !(cq.k.s5 > 0) || !(cq.s8 > 0) {
		return false // subnormal queries: not worth a special case
	}
	cq.k.a5, cq.sum8 = quantizeQuery(cq.rot, cq.k.s5, cq.s8, cq.q5, cq.q8)
	cq.buildLUT()
	// Rounding the query to steps s adds an error of deviation about
	// s/sqrt(12) per coordinate. In stage 1 it is multiplied by the signs
	// (norm sqrt(d)) and by c1; in stage 2 by the decoded row (norm ~|r|).
	d := float32(math.Sqrt(float64(q.pdim)))
	cq.k.e1 = bitsEps * qn
	cq.k.k1 = float32(bitsEps * inv12 * float64(d*cq.k.s5))
	cq.e4 = float32(int4Eps * inv12 * float64(qn))
	cq.k4 = float32(int4Eps * inv12 * float64(cq.s8))
	return true
}

// quantizeQuery writes round(v[j]/s5) into q5 and round(v[j]/s8) into q8,
// each clamped to its levels, in one pass (the test's quantizeTo is its
// reference), and returns sum |q5| and sum q8. The steps are positive and
// finite.
func quantizeQuery(v []float32, s5, s8 float32, q5, q8 []int8) (a5, sum8 int32) {
	q5, q8 = q5[:len(v)], q8[:len(v)]
	for j, x := range v {
		k5 := max(-q5Levels, min(q5Levels, roundHalfAway(x/s5)))
		k8 := max(-q8Levels, min(q8Levels, roundHalfAway(x/s8)))
		q5[j], q8[j] = int8(k5), int8(k8)
		a5 += int32(max(k5, -k5))
		sum8 += int32(k8)
	}
	return a5, sum8
}

// buildLUT fills the stage-1 tables: for nibble position p (coordinates
// 4p..4p+3) and pattern x, the sum over t of q5[4p+t] if bit t of x is set
// (the row's coordinate is >= 0) and -q5[4p+t] otherwise, plus
// sum |q5[4p+t]| so that entries are in [0, 120]. That is the sum over t of
// |q|+q (bit set) or |q|-q (clear), each in [0, 30]: the 16 entries of a
// position are summed as bytes of two words, which no sum overflows, from
// the words of each term (lutTerms).
func (cq *codeQuery) buildLUT() {
	for p := range len(cq.q5) / 4 {
		q := (*[4]int8)(cq.q5[4*p:])
		t0, t1 := &lutTerms[0][q[0]+q5Levels], &lutTerms[1][q[1]+q5Levels]
		t2, t3 := &lutTerms[2][q[2]+q5Levels], &lutTerms[3][q[3]+q5Levels]
		at := 32*(p/2) + 16*(p%2)
		binary.LittleEndian.PutUint64(cq.lut[at:], t0[0]+t1[0]+t2[0]+t3[0])
		binary.LittleEndian.PutUint64(cq.lut[at+8:], t0[1]+t1[1]+t2[1]+t3[1])
	}
	if hasAVX512 {
		cq.wide = wideLUT(cq.lut, len(cq.q5)/8, cq.wide)
	}
}

// lutTerms[t][v+q5Levels] is the term of coordinate t of a nibble position
// holding v in the 16 entries of its table (entries 0-7, then 8-15): |v|+v
// in the bytes of the patterns with bit t set, |v|-v in the others.
var lutTerms = func() (m [4][2*q5Levels + 1][2]uint64) {
	for t := range m {
		for i := range m[t] {
			v := i - q5Levels
			a := max(v, -v)
			for x := range 16 {
				e := uint64(a - v)
				if x>>t&1 == 1 {
					e = uint64(a + v)
				}
				m[t][i][x/8] |= e << (8 * (x % 8))
			}
		}
	}
	return m
}()

// est4 converts an int4 dot of a row into its estimate and upper bound
// (rounded as estConsts.est is, for the same reason).
func (cq *codeQuery) est4(dot int32, s4, nrm float32) (est, ub float32) {
	t := float32(dot-int4Max*cq.sum8) * cq.s8
	est = s4 * t
	return est, est + (float32(s4*cq.e4) + float32(nrm*cq.k4))
}
