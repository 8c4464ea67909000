package embedder

import (
	"slices"
	"testing"
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
