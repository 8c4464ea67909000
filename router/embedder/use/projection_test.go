package use

import (
	"errors"
	"math"
	"testing"
)

func TestProjectionRoundTrip(t *testing.T) {
	mean := []float32{0.5, -0.5, 0}
	rows := []float32{
		1, 0, 0,
		0, 0, 1,
	}
	p, err := decodeProjection(EncodeProjection(mean, rows))
	if err != nil {
		t.Fatal(err)
	}
	if p.in != 3 || p.out != 2 {
		t.Fatalf("decoded %d -> %d, want 3 -> 2", p.in, p.out)
	}
	cases := []struct {
		name string
		v    []float32
		want []float32
	}{
		{"first axis", []float32{1.5, -0.5, 0}, []float32{1, 0}},
		{"both axes", []float32{1.5, 3, 1}, []float32{float32(math.Sqrt(0.5)), float32(math.Sqrt(0.5))}},
		{"mean itself", []float32{0.5, -0.5, 0}, []float32{1, 0}},
		{"orthogonal to the rows", []float32{0.5, 2, 0}, []float32{1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := []float32{7, 7}
			p.apply(c.v, make([]float32, 3), out)
			for i := range out {
				if math.Abs(float64(out[i]-c.want[i])) > 1e-6 {
					t.Errorf("apply = %v, want %v", out, c.want)
					break
				}
			}
		})
	}
}

func TestDecodeProjectionRejects(t *testing.T) {
	good := EncodeProjection([]float32{0, 0}, []float32{1, 0})
	cases := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"bad magic", append([]byte("HEBBPCA0"), good[8:]...)},
		{"truncated", good[:len(good)-1]},
		{"trailing", append(append([]byte{}, good...), 0)},
		{"more outputs than inputs", EncodeProjection([]float32{0}, []float32{1, 2})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := decodeProjection(c.b); !errors.Is(err, ErrBadAssets) {
				t.Errorf("decodeProjection error = %v, want ErrBadAssets", err)
			}
		})
	}
}
