package embedder

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchText builds a deterministic English-like text of n words.
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

func BenchmarkHashEmbed(b *testing.B) {
	e := NewHash(HashDim)
	ctx := context.Background()
	for _, n := range []int{10, 30, 100} {
		texts := []string{benchText(n)}
		b.Run(fmt.Sprintf("words=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(texts[0])))
			for b.Loop() {
				if _, err := e.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHashEmbedAlternating embeds a long text and a short one by
// turns, as a server does with writes and queries sharing the scratch pool:
// the short one must not cost the long one its feature table.
func BenchmarkHashEmbedAlternating(b *testing.B) {
	e := NewHash(HashDim)
	ctx := context.Background()
	texts := [][]string{{benchText(100)}, {benchText(10)}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := e.Embed(ctx, texts[i%2]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkHashEmbedDistinct embeds 500 texts of 8 to 30 made-up words at
// once, as a batched write does: distinct words hash to features the
// branch predictor cannot learn, which one text embedded again and again
// lets it do.
func BenchmarkHashEmbedDistinct(b *testing.B) {
	texts := madeUpTexts(500)
	e := NewHash(HashDim)
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
}

// madeUpTexts returns n texts of 8 to 30 made-up words, some capitalised,
// the same on every call.
func madeUpTexts(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	syllables := strings.Fields("ka lo mi ru sen tav or pel dri qua zon bes um fi grat Bro Ul")
	texts := make([]string, n)
	for i := range texts {
		words := make([]string, 8+rng.IntN(23))
		for k := range words {
			var w strings.Builder
			for range 1 + rng.IntN(3) {
				w.WriteString(syllables[rng.IntN(len(syllables))])
			}
			words[k] = w.String()
		}
		texts[i] = strings.Join(words, " ")
	}
	return texts
}

func BenchmarkConcepts(b *testing.B) {
	text := benchText(30)
	b.ReportAllocs()
	for b.Loop() {
		Concepts(text, MaxConcepts)
	}
}
