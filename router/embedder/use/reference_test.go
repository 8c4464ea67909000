package use

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"testing"
)

// reference is one text of testdata/reference.json.gz, written by
// tools/embedder-assets/generate.js: the reference tokenizer's ids and, for
// the first texts, the TF.js embedding as int8 with one scale.
type reference struct {
	Text string  `json:"text"`
	IDs  []int32 `json:"ids"`
	Emb  *struct {
		Scale float64 `json:"scale"`
		Q     string  `json:"q"`
	} `json:"emb"`
}

// vector decodes the reference embedding, or returns nil if it has none.
func (r reference) vector(tb testing.TB) []float32 {
	tb.Helper()
	if r.Emb == nil {
		return nil
	}
	q, err := base64.StdEncoding.DecodeString(r.Emb.Q)
	if err != nil {
		tb.Fatalf("reference %q: %v", r.Text, err)
	}
	v := make([]float32, len(q))
	for i, b := range q {
		v[i] = float32(float64(int8(b)) * r.Emb.Scale)
	}
	return v
}

func loadReferences(tb testing.TB) []reference {
	tb.Helper()
	f, err := os.Open("testdata/reference.json.gz")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	var refs []reference
	if err := json.Unmarshal(b, &refs); err != nil {
		tb.Fatal(err)
	}
	if len(refs) < 300 {
		tb.Fatalf("want at least 300 reference texts, have %d", len(refs))
	}
	return refs
}
