package use

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchText builds a deterministic English-like text of n words (the same
// as router/embedder's benchmarks).
func benchText(n int) string {
	words := strings.Fields(`the user prefers dark themes in editors and wants the deployment pipeline
		to run tests before merging while the database migration waits for approval from the team lead
		because production traffic peaks on monday mornings`)
	out := make([]string, n)
	for i := range out {
		out[i] = words[(i*7)%len(words)]
	}
	return strings.Join(out, " ")
}

// BenchmarkEmbed reports embeddings per second on one core for 10-, 30- and
// 100-word texts, for the builtin embedder and its semantic part alone:
// go test -run '^$' -bench Embed -cpu 1 ./router/embedder/use/
func BenchmarkEmbed(b *testing.B) {
	for _, w := range []float64{DefaultSemanticWeight, 1} {
		e, err := NewWeighted(w)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{10, 30, 100} {
			texts := []string{benchText(n)}
			b.Run(fmt.Sprintf("w=%.2f/words=%d", w, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.Embed(context.Background(), texts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "embeddings/s")
			})
		}
	}
}

func BenchmarkTokenize(b *testing.B) {
	tok := testTokenizer(b)
	text := benchText(30)
	var s tokScratch
	b.ReportAllocs()
	for b.Loop() {
		tok.encode(text, &s)
	}
}
