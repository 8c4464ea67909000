package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/hebbdb/hebb/router/embedder/use"
)

// Projection settings: the runtime keeps projKeep principal directions of
// the table's sentence vectors after dropping the first projDrop (the
// component all sentences share), estimated on about projSample sentences
// of each corpus.
const (
	projKeep   = 128
	projDrop   = 1
	projSample = 10000
	projIters  = 60
)

// writeProjection reads the table just written to dir, embeds a sample of
// each corpus with it as the runtime does, and writes projection.bin.gz:
// the sample's mean and its principal directions.
func writeProjection(cfg config, tok *use.Tokenizer) error {
	rows, bias, dim, err := readTable(filepath.Join(cfg.assets, "table.bin.gz"))
	if err != nil {
		return err
	}
	var vecs [][]float64
	for _, name := range corpora {
		text, err := os.ReadFile(filepath.Join(cfg.work, "corpus-"+name+".txt"))
		if err != nil {
			return fmt.Errorf("cannot read corpus %s: %w", name, err)
		}
		lines := strings.Split(strings.TrimSpace(string(text)), "\n")
		for i := 0; i < len(lines); i += max(1, len(lines)/projSample) {
			vecs = append(vecs, unitTableVector(rows, bias, dim, tok.Encode(lines[i])))
		}
	}
	mean, dirs := principal(vecs, dim, projDrop+projKeep, projIters)
	slog.Info("principal directions", "sentences", len(vecs), "kept", projKeep, "dropped", projDrop)
	var flat []float32
	for _, d := range dirs[projDrop:] {
		for _, v := range d {
			flat = append(flat, float32(v))
		}
	}
	m32 := make([]float32, dim)
	for k, v := range mean {
		m32[k] = float32(v)
	}
	return writeGzip(filepath.Join(cfg.assets, "projection.bin.gz"), use.EncodeProjection(m32, flat))
}

func readTable(path string) (rows, bias []float32, dim int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("cannot open the table: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("cannot gunzip the table: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("cannot gunzip the table: %w", err)
	}
	return use.DecodeTable(b)
}

// unitTableVector is the runtime's table vector of a piece sequence: tanh
// of the bias plus the mean row, normalised.
func unitTableVector(rows, bias []float32, dim int, ids []int32) []float64 {
	acc := make([]float64, dim)
	for _, id := range ids {
		for k, v := range rows[int(id)*dim : (int(id)+1)*dim] {
			acc[k] += float64(v)
		}
	}
	var ss float64
	for k := range acc {
		acc[k] = math.Tanh(acc[k]/float64(max(len(ids), 1)) + float64(bias[k]))
		ss += acc[k] * acc[k]
	}
	for k := range acc {
		acc[k] /= math.Sqrt(max(ss, 1e-24))
	}
	return acc
}

// principal returns the mean of vecs and their top n principal directions,
// by subspace iteration on the covariance from a fixed start, so reruns give
// the same bytes.
func principal(vecs [][]float64, dim, n, iters int) ([]float64, [][]float64) {
	mean := make([]float64, dim)
	for _, v := range vecs {
		for k := range v {
			mean[k] += v[k]
		}
	}
	for k := range mean {
		mean[k] /= float64(len(vecs))
	}
	cov := make([]float64, dim*dim)
	c := make([]float64, dim)
	for _, v := range vecs {
		for k := range v {
			c[k] = v[k] - mean[k]
		}
		for a := range dim {
			row := cov[a*dim : (a+1)*dim]
			for b := range dim {
				row[b] += c[a] * c[b]
			}
		}
	}
	q := make([][]float64, n)
	for i := range q {
		q[i] = make([]float64, dim)
		for k := range q[i] {
			q[i][k] = math.Sin(float64(i*dim+k) * 1.7)
		}
	}
	for range iters {
		for i := range q {
			z := make([]float64, dim)
			for a := range dim {
				z[a] = dot(cov[a*dim:(a+1)*dim], q[i])
			}
			q[i] = z
		}
		orthonormalise(q)
	}
	return mean, q
}

// orthonormalise applies Gram-Schmidt to q in order.
func orthonormalise(q [][]float64) {
	for i := range q {
		for j := range i {
			d := dot(q[i], q[j])
			for k := range q[i] {
				q[i][k] -= d * q[j][k]
			}
		}
		n := math.Sqrt(dot(q[i], q[i]))
		for k := range q[i] {
			q[i][k] /= n
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += a[k] * b[k]
	}
	return s
}

func writeGzip(path string, data []byte) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("cannot compress %s: %w", path, err)
	}
	if _, err := zw.Write(data); err != nil {
		return fmt.Errorf("cannot compress %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("cannot compress %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	slog.Info("wrote", "path", path, "bytes", buf.Len())
	return nil
}
