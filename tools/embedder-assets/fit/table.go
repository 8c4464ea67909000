package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"

	"github.com/viterin/vek/vek32"

	"github.com/hebbdb/hebb/router/embedder/use"
)

// isoTable returns each piece's last hidden state when it is the whole
// input: the prior the fit pulls rare pieces towards.
func (m *model) isoTable(vocab int) []float32 {
	out := make([]float32, vocab*outDim)
	const batch = 500
	for lo := 0; lo < vocab; lo += batch {
		var seqs [][]int32
		for id := lo; id < min(lo+batch, vocab); id++ {
			seqs = append(seqs, []int32{int32(id)})
		}
		pooled, _ := m.forward(seqs)
		for i, p := range pooled {
			copy(out[(lo+i)*outDim:], p)
		}
	}
	return out
}

// project multiplies each table row by the tanh layer's weights, so the
// runtime needs only a mean, the bias and tanh.
func (m *model) project(table []float32) []float32 {
	out := make([]float32, len(table))
	vek32.MatMul_Into(out, table, m.tanhW, outDim)
	return out
}

// tableEmbed is the runtime's computation in float32: the semantic vector of
// a piece sequence from a projected table.
func (m *model) tableEmbed(proj []float32, ids []int32) []float32 {
	acc := make([]float32, outDim)
	for _, id := range ids {
		vek32.Add_Inplace(acc, proj[int(id)*outDim:(int(id)+1)*outDim])
	}
	var ss float64
	for k := range acc {
		acc[k] = float32(math.Tanh(float64(acc[k]/float32(max(len(ids), 1)) + m.tanhB[k])))
		ss += float64(acc[k]) * float64(acc[k])
	}
	vek32.MulNumber_Inplace(acc, float32(1/math.Sqrt(max(ss, 1e-12))))
	return acc
}

// agreement is the mean cosine between the table's vectors and the model's
// on the references that carry an embedding.
func (m *model) agreement(proj []float32, refs []reference) float64 {
	var sum float64
	n := 0
	for _, r := range refs {
		if len(r.Emb) == 0 {
			continue
		}
		v := m.tableEmbed(proj, r.IDs)
		var c float64
		for k := range v {
			c += float64(v[k]) * r.Emb[k]
		}
		sum += c
		n++
	}
	return sum / float64(max(n, 1))
}

// writeTable quantises the projected table and writes table.bin.gz.
func writeTable(dir string, proj, bias []float32) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("cannot compress the table: %w", err)
	}
	if _, err := zw.Write(use.EncodeTable(proj, bias, outDim)); err != nil {
		return fmt.Errorf("cannot compress the table: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("cannot compress the table: %w", err)
	}
	path := filepath.Join(dir, "table.bin.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("cannot write the table: %w", err)
	}
	slog.Info("wrote the table", "path", path, "bytes", buf.Len())
	return nil
}
