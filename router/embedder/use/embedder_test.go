package use

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/hebbdb/hebb/router/embedder"
	"github.com/hebbdb/hebb/vecmath"
)

func newTestEmbedder(tb testing.TB, w float64) *Embedder {
	tb.Helper()
	e, err := NewWeighted(w)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func TestNewIsBuiltin(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var _ embedder.Embedder = e
	if e.Name() != embedder.NameBuiltin {
		t.Errorf("Name() = %q, want %q", e.Name(), embedder.NameBuiltin)
	}
	if want := 128 + LexicalDim; e.Dim() != want || want != 896 {
		t.Errorf("Dim() = %d, want %d = 896", e.Dim(), want)
	}
	if got := newTestEmbedder(t, 1).Dim(); got != 128 {
		t.Errorf("semantic-only Dim() = %d, want 128", got)
	}
}

func TestNewWeightedRejects(t *testing.T) {
	for _, w := range []float64{0, -0.5, 1.5, math.NaN()} {
		if _, err := NewWeighted(w); !errors.Is(err, ErrBadWeight) {
			t.Errorf("NewWeighted(%v) error = %v, want ErrBadWeight", w, err)
		}
	}
}

// TestUnitVectors checks the invariant on odd inputs: unit norm, no NaN.
func TestUnitVectors(t *testing.T) {
	texts := []string{
		"", " ", "...", "\x00", "\xff\xfe invalid utf-8", "🙂🙂🙂", "東京", "a",
		strings.Repeat("long text with many words ", 200),
		"The user prefers a dark theme in every editor.",
	}
	for _, w := range []float64{1, DefaultSemanticWeight, 0.1} {
		e := newTestEmbedder(t, w)
		vecs, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vecs {
			if len(v) != e.Dim() {
				t.Fatalf("w=%v %q: length %d, want %d", w, texts[i], len(v), e.Dim())
			}
			var ss float64
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("w=%v %q: non-finite component", w, texts[i])
				}
				ss += float64(x) * float64(x)
			}
			if math.Abs(ss-1) > 1e-4 {
				t.Errorf("w=%v %q: squared norm %v, want 1", w, texts[i], ss)
			}
		}
	}
}

// TestWeightedCosine checks that the builtin cosine is the weighted sum of
// the semantic and the hashing cosines.
func TestWeightedCosine(t *testing.T) {
	a, b := "The user prefers a dark theme in every editor", "what colour scheme does she like for her IDE?"
	sem := embedPair(t, newTestEmbedder(t, 1), a, b)
	hash := embedPair(t, embedder.NewHash(LexicalDim), a, b)
	got := embedPair(t, newTestEmbedder(t, 0.3), a, b)
	if want := 0.3*sem + 0.7*hash; math.Abs(got-want) > 1e-5 {
		t.Errorf("cosine %v, want 0.3*%v + 0.7*%v = %v", got, sem, hash, want)
	}
}

func embedPair(t *testing.T, e embedder.Embedder, a, b string) float64 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	return float64(vecmath.DotRef(v[0], v[1]))
}

func TestDeterministicAndConcurrent(t *testing.T) {
	e := newTestEmbedder(t, DefaultSemanticWeight)
	texts := []string{"deploy on fridays", "the cat sat on the mat", "", "database migration plan"}
	want, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				got, err := e.Embed(context.Background(), texts)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range got {
					for k := range got[i] {
						if math.Float32bits(got[i][k]) != math.Float32bits(want[i][k]) {
							t.Errorf("text %d component %d differs between calls", i, k)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestEmbedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newTestEmbedder(t, DefaultSemanticWeight).Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed on a cancelled context: error %v, want context.Canceled", err)
	}
}

// minAgreement is the least mean cosine between the table's semantic vectors
// and the TF.js model's on the reference texts: the fitted table reaches
// 0.68, each piece's state when alone (the fit's prior) 0.3, and a broken
// table or tokenizer falls to about 0.
const minAgreement = 0.6

// TestAgreesWithModel compares the table's vectors (before the projection)
// with the reference embeddings of the full model.
func TestAgreesWithModel(t *testing.T) {
	m, err := loadedAssets()
	if err != nil {
		t.Fatal(err)
	}
	s := m.scratch()
	got := make([]float32, m.table.dim)
	var sum float64
	n := 0
	for _, r := range loadReferences(t) {
		want := r.vector(t)
		if want == nil {
			continue
		}
		m.embedTable(r.Text, got, s)
		sum += float64(vecmath.DotRef(got, want)) / math.Sqrt(float64(vecmath.DotRef(want, want)))
		n++
	}
	mean := sum / float64(n)
	t.Logf("mean cosine to the model over %d texts: %.4f", n, mean)
	if mean < minAgreement {
		t.Errorf("mean cosine to the model %.4f, want at least %.2f", mean, minAgreement)
	}
}

// TestParaphraseCloserThanUnrelated checks the semantic signal on a few
// hand-picked triples the hashing embedder cannot separate by words.
func TestParaphraseCloserThanUnrelated(t *testing.T) {
	e := newTestEmbedder(t, 1)
	cases := []struct{ a, para, other string }{
		{"The user prefers a dark theme in every editor", "what colour scheme does she like for her IDE?", "which airline does he fly with?"},
		{"He is allergic to peanuts", "does he have any food allergies?", "what version of postgres runs in production?"},
		{"We chose PostgreSQL for invoicing", "which database did we pick for billing?", "when is her birthday?"},
	}
	for _, c := range cases {
		t.Run(c.a, func(t *testing.T) {
			para, other := embedPair(t, e, c.a, c.para), embedPair(t, e, c.a, c.other)
			if para <= other {
				t.Errorf("cos(paraphrase) %.3f <= cos(unrelated) %.3f", para, other)
			}
		})
	}
}
