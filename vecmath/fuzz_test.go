package vecmath

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// floatsOf reads little-endian float32 bit patterns, so fuzzed inputs reach
// NaN payloads, ±Inf, subnormals and huge values.
func floatsOf(data []byte) []float32 {
	v := make([]float32, len(data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return v
}

func bytesOf(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// FuzzTopK checks TopK against TopKRef on arbitrary scores and k, and Dot
// against the order-independent expectation on the same floats split in two.
func FuzzTopK(f *testing.F) {
	f.Add(bytesOf(0.5, 0.9, 0.5, 0.9, 0.5), 3)
	f.Add(bytesOf(nan, 1, nan, inf, ninf, 0, float32(math.Copysign(0, -1))), 4)
	f.Add(bytesOf(1, 2, 3, 4, 5, 6, 7, 8), 100)
	f.Add([]byte{}, 1)
	f.Add(bytesOf(3e38, 3e38, 3e38, 3e38), -1)
	f.Fuzz(func(t *testing.T, data []byte, k int) {
		scores := floatsOf(data)
		k %= len(scores) + 3
		want := TopKRef(scores, k)
		if got := TopK(scores, k, nil); !slices.Equal(got, want) {
			t.Fatalf("TopK(%v, %d) = %v, want %v", scores, k, got, want)
		}
		a, b := scores[:len(scores)/2], scores[len(scores)/2:]
		e := expectDot(a, b)
		e.check(t, "Dot", Dot(a, b))
		e.check(t, "DotRef", DotRef(a, b))
		e.check(t, "dotScalar", dotScalar(a, b[:len(a)]))
	})
}
