package use

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/hebbdb/hebb/vecmath"
)

// projectionMagic opens projection.bin; the digit is the format version.
const projectionMagic = "HEBBPCA1"

// projection maps the table's 512-d unit vector to the semantic part of the
// builtin embedder: subtract the corpus mean, then take the coordinates
// along the corpus's principal directions, the first one (the component
// every sentence shares) left out. It keeps what tells sentences apart in
// a quarter of the width, which leaves the rest of the vector to the
// hashing part.
type projection struct {
	in, out int
	mean    []float32 // in
	rows    []float32 // out x in, orthonormal rows
	cols    []float32 // rows transposed (in x out), as vecmath.DotColumns reads them
}

// decodeProjection parses projection.bin (gunzipped).
func decodeProjection(b []byte) (*projection, error) {
	in, out, b, err := assetHeader(b, projectionMagic, "projection")
	if err != nil {
		return nil, err
	}
	if in <= 0 || out <= 0 || in > 1<<12 || out > in || len(b) != 4*in*(1+out) {
		return nil, fmt.Errorf("cannot decode projection of %d x %d from %d bytes: %w", out, in, len(b), ErrBadAssets)
	}
	p := &projection{in: in, out: out, mean: make([]float32, in), rows: make([]float32, in*out)}
	readF32s(readF32s(b, p.mean), p.rows)
	p.cols = make([]float32, in*out)
	for i := range out {
		for k := range in {
			p.cols[k*out+i] = p.rows[i*in+k]
		}
	}
	return p, nil
}

// EncodeProjection is the inverse of the decoder, for the generator: mean
// (length in) and rows (out x in, row-major), as float32.
func EncodeProjection(mean, rows []float32) []byte {
	in := len(mean)
	var buf bytes.Buffer
	buf.WriteString(projectionMagic)
	var u [4]byte
	put := func(v uint32) {
		binary.LittleEndian.PutUint32(u[:], v)
		buf.Write(u[:])
	}
	put(uint32(in))
	put(uint32(len(rows) / max(in, 1)))
	for _, v := range mean {
		put(math.Float32bits(v))
	}
	for _, v := range rows {
		put(math.Float32bits(v))
	}
	return buf.Bytes()
}

// apply writes the projection of the unit vector v into out (length
// p.out), L2 normalised; centred is scratch of length p.in. Each coordinate
// is the dot of a row with the centred vector, summed in order with each
// product rounded to float32 before it is added, as in the table sums:
// vecmath.DotColumns computes eight coordinates at once with those bits
// (the loop over one row at a time cost ~70 µs a text, half of an
// embedding). A vector with no component left (the corpus mean itself)
// becomes the first axis.
func (p *projection) apply(v, centred, out []float32) {
	for k := range centred {
		centred[k] = v[k] - p.mean[k]
	}
	vecmath.DotColumns(out[:p.out], p.cols, centred[:p.in])
	var ss float64
	for _, acc := range out {
		ss += float64(float64(acc) * float64(acc))
	}
	scaleToUnit(out, ss)
}
