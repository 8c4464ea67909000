package use

import (
	"slices"
	"strings"
	"testing"
)

func testTokenizer(tb testing.TB) *Tokenizer {
	tb.Helper()
	vocab, err := gunzipAsset("assets/vocab.json.gz")
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := ParseVocab(vocab)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// TestTokenizerMatchesReference checks the Go tokenizer id for id against
// the TF.js reference on every reference text (odd Unicode, emoji, CJK,
// NFKC-folded forms, the memory pairs).
func TestTokenizerMatchesReference(t *testing.T) {
	tok := testTokenizer(t)
	for _, r := range loadReferences(t) {
		got := tok.Encode(r.Text)
		if len(got) == 0 && len(r.IDs) == 0 {
			continue
		}
		if !slices.Equal(got, r.IDs) {
			t.Errorf("Encode(%q) = %v, want %v", r.Text, got, r.IDs)
		}
	}
}

func TestTokenizerCases(t *testing.T) {
	tok := testTokenizer(t)
	pieces := func(text string) string {
		var out []string
		for _, id := range tok.Encode(text) {
			out = append(out, tok.Piece(int(id)))
		}
		return strings.Join(out, " ")
	}
	cases := []struct {
		name, text, want string
	}{
		{"empty", "", ""},
		{"words", "Hello world", "▁H ello ▁world"},
		{"subwords", "The user prefers a dark theme", "▁The ▁user ▁prefer s ▁a ▁dark ▁the me"},
		{"nfkc", "ﬁne", "▁fine"},
		{"colon scores zero", "a:b", "▁a : b"},
		{"unknown run merged", "a🙂🙂b", "▁a \ufffd b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := pieces(c.text); got != c.want {
				t.Errorf("pieces(%q) = %q, want %q", c.text, got, c.want)
			}
		})
	}
}

func TestPieceOutOfRange(t *testing.T) {
	tok := testTokenizer(t)
	for _, id := range []int{-1, tok.VocabSize()} {
		if got := tok.Piece(id); got != "" {
			t.Errorf("Piece(%d) = %q, want empty", id, got)
		}
	}
}

func TestUTF16Len(t *testing.T) {
	f := func(s string, want int) {
		t.Helper()
		if got := utf16Len(s); got != want {
			t.Errorf("utf16Len(%q) = %d, want %d", s, got, want)
		}
	}
	f("", 0)
	f("abc", 3)
	f("▁é", 2)
	f("🙂", 2)
}
