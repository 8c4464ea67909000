package use

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"
)

// The assets are written by `make embedder-assets` (tools/embedder-assets):
// the model's vocabulary as published, the per-piece table and the
// projection of the table's vectors onto their principal directions.
//
//go:embed assets
var assetFS embed.FS

// tableMagic opens table.bin; the digit is the format version.
const tableMagic = "HEBBUSE1"

// table is the per-piece table: for each vocabulary piece, the model's
// pre-activation contribution (the least-squares fit of the piece's share of
// the mean-pooled hidden state, times the final dense layer), int8 with one
// scale per row, and the dense layer's bias.
type table struct {
	vocab, dim int
	bias       []float32 // dim
	scale      []float32 // vocab
	rows       []int8    // vocab x dim
}

// decodeTable parses table.bin (gunzipped).
func decodeTable(b []byte) (*table, error) {
	vocab, dim, b, err := assetHeader(b, tableMagic, "table")
	if err != nil {
		return nil, err
	}
	if vocab <= 0 || dim <= 0 || vocab > 1<<20 || dim > 1<<12 || len(b) != 4*dim+4*vocab+vocab*dim {
		return nil, fmt.Errorf("cannot decode table of %d x %d from %d bytes: %w", vocab, dim, len(b), ErrBadAssets)
	}
	t := &table{vocab: vocab, dim: dim, bias: make([]float32, dim), scale: make([]float32, vocab), rows: make([]int8, vocab*dim)}
	b = readF32s(b, t.bias)
	b = readF32s(b, t.scale)
	for i := range t.rows {
		t.rows[i] = int8(b[i])
	}
	return t, nil
}

// assetHeader checks an asset's magic and returns the two little-endian
// uint32 sizes after it and the rest of the bytes.
func assetHeader(b []byte, magic, what string) (x, y int, rest []byte, err error) {
	if len(b) < len(magic)+8 || string(b[:len(magic)]) != magic {
		return 0, 0, nil, fmt.Errorf("cannot decode %s: no %s header: %w", what, magic, ErrBadAssets)
	}
	b = b[len(magic):]
	return int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:])), b[8:], nil
}

// readF32s fills dst with little-endian float32s from b and returns the
// bytes after them.
func readF32s(b []byte, dst []float32) []byte {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return b[4*len(dst):]
}

// DecodeTable is EncodeTable's inverse, for the generator: the
// dequantised rows (vocab x dim, row-major), the bias and dim.
func DecodeTable(b []byte) (rows, bias []float32, dim int, err error) {
	t, err := decodeTable(b)
	if err != nil {
		return nil, nil, 0, err
	}
	rows = make([]float32, len(t.rows))
	for r := range t.vocab {
		for k := range t.dim {
			rows[r*t.dim+k] = t.scale[r] * float32(t.rows[r*t.dim+k])
		}
	}
	return rows, t.bias, t.dim, nil
}

// EncodeTable is the inverse of the decoder, for the generator: it
// quantises rows (vocab x dim, row-major) to int8 with a per-row scale.
func EncodeTable(rows, bias []float32, dim int) []byte {
	vocab := len(rows) / dim
	var buf bytes.Buffer
	buf.WriteString(tableMagic)
	var u [4]byte
	put := func(v uint32) {
		binary.LittleEndian.PutUint32(u[:], v)
		buf.Write(u[:])
	}
	put(uint32(vocab))
	put(uint32(dim))
	for _, v := range bias {
		put(math.Float32bits(v))
	}
	scales := make([]float32, vocab)
	for r := range vocab {
		var m float32
		for _, v := range rows[r*dim : (r+1)*dim] {
			m = max(m, float32(math.Abs(float64(v))))
		}
		scales[r] = m / 127
		put(math.Float32bits(scales[r]))
	}
	for r := range vocab {
		for _, v := range rows[r*dim : (r+1)*dim] {
			q := 0.0
			if scales[r] > 0 {
				q = math.Round(float64(v / scales[r]))
			}
			buf.WriteByte(byte(int8(max(-127, min(127, q)))))
		}
	}
	return buf.Bytes()
}

// loadedAssets are decoded once, on first use.
var loadedAssets = sync.OnceValues(func() (*model, error) {
	vocab, err := gunzipAsset("assets/vocab.json.gz")
	if err != nil {
		return nil, err
	}
	tok, err := ParseVocab(vocab)
	if err != nil {
		return nil, err
	}
	raw, err := gunzipAsset("assets/table.bin.gz")
	if err != nil {
		return nil, err
	}
	tab, err := decodeTable(raw)
	if err != nil {
		return nil, err
	}
	if tab.vocab < tok.VocabSize() {
		return nil, fmt.Errorf("cannot pair a table of %d rows with %d pieces: %w", tab.vocab, tok.VocabSize(), ErrBadAssets)
	}
	raw, err = gunzipAsset("assets/projection.bin.gz")
	if err != nil {
		return nil, err
	}
	proj, err := decodeProjection(raw)
	if err != nil {
		return nil, err
	}
	if proj.in != tab.dim {
		return nil, fmt.Errorf("cannot project %d-d table vectors with a %d-d projection: %w", tab.dim, proj.in, ErrBadAssets)
	}
	return &model{tok: tok, table: tab, proj: proj}, nil
})

func gunzipAsset(name string) ([]byte, error) {
	f, err := assetFS.Open(name)
	if err != nil {
		return nil, fmt.Errorf("cannot open asset %s: %w", name, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("cannot gunzip asset %s: %w", name, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("cannot gunzip asset %s: %w", name, err)
	}
	return b, nil
}
