package bench

import (
	"strings"
	"testing"
)

func TestTextGen(t *testing.T) {
	g := NewTextGen(42)
	t.Run("deterministic", func(t *testing.T) {
		h := NewTextGen(42)
		for i := range uint64(50) {
			if a, b := g.Text(StreamPopulate, i), h.Text(StreamPopulate, i); a != b {
				t.Fatalf("text %d differs: %q vs %q", i, a, b)
			}
		}
	})
	t.Run("distinct", func(t *testing.T) {
		seen := map[string]bool{}
		for i := range uint64(5000) {
			s := g.Text(StreamPopulate, i)
			if seen[s] {
				t.Fatalf("text %d repeats: %q", i, s)
			}
			seen[s] = true
		}
	})
	t.Run("length", func(t *testing.T) {
		for i := range uint64(500) {
			n := len(strings.Fields(g.Text(StreamWrite, i)))
			if n < minWords || n > 2*maxWords { // a number token may hold two fields ("port 80")
				t.Fatalf("text %d has %d words", i, n)
			}
		}
	})
	t.Run("seeds and streams differ", func(t *testing.T) {
		if g.Text(StreamPopulate, 1) == NewTextGen(43).Text(StreamPopulate, 1) {
			t.Error("seeds 42 and 43 give the same text")
		}
		if g.Text(StreamPopulate, 1) == g.Text(StreamWrite, 1) {
			t.Error("streams populate and write give the same text")
		}
	})
	t.Run("query is a window of a stored text", func(t *testing.T) {
		for i := range uint64(200) {
			q := g.Query(StreamPopulate, 10, i)
			found := false
			for j := range uint64(10) {
				if strings.Contains(g.Text(StreamPopulate, j), q) {
					found = true
				}
			}
			if !found {
				t.Fatalf("query %d %q is in none of the first 10 texts", i, q)
			}
		}
		if q := g.Query(StreamPopulate, 0, 3); q == "" {
			t.Error("query over no texts is empty")
		}
	})
	t.Run("vocabulary", func(t *testing.T) {
		if len(g.vocab) != vocabSize {
			t.Fatalf("vocabulary has %d words", len(g.vocab))
		}
	})
}
