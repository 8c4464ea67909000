package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/hebbdb/hebb/router/embedder/use"
)

// sample is one corpus sentence: its piece ids (clipped to the model's
// window) and the model's mean-pooled last hidden state.
type sample struct {
	ids    []int32
	pooled []float32
}

// poolCorpus runs the model over every sentence of texts and writes the
// samples to cache, 256 sentences a batch.
func poolCorpus(m *model, tok *use.Tokenizer, texts []string, cache string) error {
	f, err := os.Create(cache)
	if err != nil {
		return fmt.Errorf("cannot create the pooled cache: %w", err)
	}
	w := bufio.NewWriter(f)
	start := time.Now()
	const batch = 256
	for lo := 0; lo < len(texts); lo += batch {
		var seqs [][]int32
		for _, t := range texts[lo:min(lo+batch, len(texts))] {
			ids := tok.Encode(t)
			if len(ids) == 0 {
				continue
			}
			seqs = append(seqs, ids[:min(len(ids), maxLen)])
		}
		pooled, _ := m.forward(seqs)
		for i := range seqs {
			if err := writeSample(w, sample{seqs[i], pooled[i]}); err != nil {
				f.Close()
				return err
			}
		}
		if (lo/batch)%50 == 0 {
			slog.Info("pooling corpus", "done", lo, "of", len(texts), "elapsed", time.Since(start).Round(time.Second))
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("cannot write the pooled cache: %w", err)
	}
	return f.Close()
}

func writeSample(w io.Writer, s sample) error {
	buf := make([]byte, 2+2*len(s.ids)+4*len(s.pooled))
	binary.LittleEndian.PutUint16(buf, uint16(len(s.ids)))
	for i, id := range s.ids {
		binary.LittleEndian.PutUint16(buf[2+2*i:], uint16(id))
	}
	off := 2 + 2*len(s.ids)
	for i, v := range s.pooled {
		binary.LittleEndian.PutUint32(buf[off+4*i:], math.Float32bits(v))
	}
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("cannot write the pooled cache: %w", err)
	}
	return nil
}

// readSamples reads a cache written by poolCorpus.
func readSamples(cache string) ([]sample, error) {
	f, err := os.Open(cache)
	if err != nil {
		return nil, fmt.Errorf("cannot open the pooled cache: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var out []sample
	var hdr [2]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("cannot read the pooled cache: %w", err)
		}
		n := int(binary.LittleEndian.Uint16(hdr[:]))
		buf := make([]byte, 2*n+4*outDim)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("cannot read the pooled cache: %w", err)
		}
		s := sample{ids: make([]int32, n), pooled: make([]float32, outDim)}
		for i := range s.ids {
			s.ids[i] = int32(binary.LittleEndian.Uint16(buf[2*i:]))
		}
		for i := range s.pooled {
			s.pooled[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[2*n+4*i:]))
		}
		out = append(out, s)
	}
}
