package embedder

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"punctuation only", " ,.;!? -- ", nil},
		{"lowercases", "The User Prefers", []string{"the", "user", "prefers"}},
		{"apostrophe dropped", "don't stop", []string{"dont", "stop"}},
		{"typographic apostrophe", "God’s Spirit", []string{"gods", "spirit"}},
		{"quote marks split", "'quoted' words", []string{"quoted", "words"}},
		{"trailing apostrophe", "the users' files", []string{"the", "users", "files"}},
		{"hyphen splits", "state-of-the-art", []string{"state", "of", "the", "art"}},
		{"digits kept", "port 8080 on v2", []string{"port", "8080", "on", "v2"}},
		{"punctuation splits", "a.b,c;d:e/f_g", []string{"a", "b", "c", "d", "e", "f", "g"}},
		{"accents", "Café CRÈME über", []string{"café", "crème", "über"}},
		{"cyrillic", "Привет, Мир", []string{"привет", "мир"}},
		{"greek", "Καλημέρα κόσμε", []string{"καλημέρα", "κόσμε"}},
		{"combining mark", "cafe\u0301 ok", []string{"cafe\u0301", "ok"}},
		{"devanagari", "नमस्ते दुनिया", []string{"नमस्ते", "दुनिया"}},
		{"han per character", "我爱Go语言", []string{"我", "爱", "go", "语", "言"}},
		{"emoji splits", "hot🔥dog", []string{"hot", "dog"}},
		{"invalid utf8", "ab\xffcd", []string{"ab", "cd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokens(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// scanRef is tokenScan.scan without its ASCII table: every rune through
// the Unicode classes, as it was written first.
func scanRef(text string) (buf []byte, ends []int) {
	inWord := false
	closeWord := func() {
		if inWord {
			ends = append(ends, len(buf))
		}
	}
	for i, r := range text {
		switch {
		case isSingleRuneWord(r):
			closeWord()
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			ends = append(ends, len(buf))
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (inWord && unicode.IsMark(r)):
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			inWord = true
		case inWord && isApostrophe(r) && nextIsWordRune(text[i+utf8.RuneLen(r):]):
		default:
			closeWord()
			inWord = false
		}
	}
	closeWord()
	return buf, ends
}

// TestScanMatchesRef: the ASCII table gives the tokens the Unicode classes
// give, over every ASCII byte and random mixes of ASCII, accented and
// combining letters, apostrophes, Han, digits of other scripts and invalid
// UTF-8.
func TestScanMatchesRef(t *testing.T) {
	pieces := []string{"a", "Z", "q", "0", "9", " ", "-", "'", "’", "ʼ", "é", "É", "\u0301", "漢", "ひ",
		"٣", "ß", "İ", "\xff", "\xe2\x80", "_", ".", "\t", "Ω", "x'y", "don't"}
	for c := range utf8.RuneSelf {
		pieces = append(pieces, string(rune(c)))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var s tokenScan
	for n := range 20000 {
		var b strings.Builder
		for range 1 + n%24 {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		s.scan(text)
		buf, ends := scanRef(text)
		if !bytes.Equal(s.buf, buf) || !slices.Equal(s.ends, ends) {
			t.Fatalf("scan(%q) = %q %v, want %q %v", text, s.buf, s.ends, buf, ends)
		}
	}
}
