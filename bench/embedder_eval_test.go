package bench

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestEmbedderEval runs the embedder evaluation and logs its report.
// Run it with HEBB_EMBED_EVAL=1 go test -run TestEmbedderEval ./bench/ -v
// (from the repository, with shared/ beside it).
func TestEmbedderEval(t *testing.T) {
	if os.Getenv("HEBB_EMBED_EVAL") == "" {
		t.Skip("set HEBB_EMBED_EVAL=1 to run the embedder evaluation")
	}
	var out strings.Builder
	err := RunEmbedderEval(&out, EmbedderEvalOptions{
		ParaphrasePath: "../" + DefaultParaphrasePath,
		MemoryPath:     "../" + DefaultMemoryPairsPath,
		Weights:        weightsFromEnv(t),
	})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
}

func TestEvalSetsAndScores(t *testing.T) {
	s, err := loadEvalSet("memory", "../"+DefaultMemoryPairsPath, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.queries) < 200 {
		t.Fatalf("memory set has %d pairs, want at least 200", len(s.queries))
	}
	cases := []struct {
		name          string
		query, target string
		want          float64
	}{
		{"same words", "dark theme", "the dark theme", 1},
		{"no words", "what colour", "dark theme", 0},
		{"half", "dark colour", "dark theme", 0.5},
		{"empty query", "", "dark", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := wordOverlap(c.query, c.target); got != c.want {
				t.Errorf("wordOverlap(%q, %q) = %v, want %v", c.query, c.target, got, c.want)
			}
		})
	}
}

// weightsFromEnv reads extra semantic weights from HEBB_EMBED_WEIGHTS
// ("0.3,0.7").
func weightsFromEnv(t *testing.T) []float64 {
	var out []float64
	for _, f := range strings.Split(os.Getenv("HEBB_EMBED_WEIGHTS"), ",") {
		if f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("HEBB_EMBED_WEIGHTS: %v", err)
		}
		out = append(out, v)
	}
	return out
}
