package embedder

import (
	"slices"
	"strings"
	"testing"
)

func TestConcepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"brief example", "The user prefers dark themes in editors", MaxConcepts,
			[]string{"user", "prefer", "dark", "theme", "editor"}},
		{"empty", "", MaxConcepts, nil},
		{"only stop words", "it is what it is", MaxConcepts, nil},
		{"deduplicated after stemming", "theme themes Theme THEMES", MaxConcepts, []string{"theme"}},
		{"first-seen order", "zebra apple zebra mango", MaxConcepts, []string{"zebra", "apple", "mango"}},
		{"single digits dropped", "room 7 has 12 chairs", MaxConcepts, []string{"room", "12", "chair"}},
		{"contraction stop word", "don't deploy on friday", MaxConcepts, []string{"deploy", "friday"}},
		{"max respected", "alpha beta gamma delta", 2, []string{"alpha", "beta"}},
		{"max zero", "alpha beta", 0, nil},
		{"unicode", "Der Benutzer mag Kaffee", MaxConcepts, []string{"der", "benutzer", "mag", "kaffee"}},
		// A hash or base64 run is no concept, and one over the bound a
		// client may give could not be imported again.
		{"over 200 characters dropped", "token " + strings.Repeat("a", 201) + " kept", MaxConcepts, []string{"token", "kept"}},
		{"200 characters kept", strings.Repeat("b", 200), MaxConcepts, []string{strings.Repeat("b", 200)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Concepts(tt.in, tt.max)
			if !slices.Equal(got, tt.want) || tt.want == nil && got != nil {
				t.Errorf("Concepts(%q, %d) = %#v, want %#v", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

// TestConceptsMatchTokens: Concepts over its pooled scan gives what the
// same rules give over Tokens, on made-up texts with capitals, stop words,
// digits, accents and a pooled buffer left by a longer text.
func TestConceptsMatchTokens(t *testing.T) {
	ref := func(text string, max int) []string {
		var out []string
		for _, tok := range Tokens(text) {
			if c := Stem(tok); !isNoise(tok) && !IsStopWord(c) && !slices.Contains(out, c) && len(out) < max {
				out = append(out, c)
			}
		}
		return out
	}
	texts := append(madeUpTexts(2000), "The 7 users' Cafés in ÜBER-town don't close at 10:30",
		"it is what it is", "", strings.Repeat("alpha beta ", 400))
	for i, text := range texts {
		text += " the of and 3 " + texts[(i+1)%len(texts)][:min(20, len(texts[(i+1)%len(texts)]))]
		for _, max := range []int{1, 5, MaxConcepts} {
			if got, want := Concepts(text, max), ref(text, max); !slices.Equal(got, want) {
				t.Fatalf("Concepts(%q, %d) = %q, want %q", text, max, got, want)
			}
		}
	}
}

func TestConceptsCapped(t *testing.T) {
	text := ""
	for i := range 40 {
		text += string(rune('a'+i%26)) + string(rune('a'+i/26)) + "word "
	}
	if got := Concepts(text, MaxConcepts); len(got) != MaxConcepts {
		t.Errorf("len(Concepts) = %d, want %d", len(got), MaxConcepts)
	}
}

func TestNormalizeConcept(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := NormalizeConcept(in); got != want {
			t.Errorf("NormalizeConcept(%q) = %q, want %q", in, got, want)
		}
	}
	f("  Dark Mode ", "dark mode")
	f("THEMES", "themes") // client concepts are not stemmed
	f("\t\n", "")
	f("", "")
	f("Ünïcode", "ünïcode")
}

func TestIsStopWord(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		if got := IsStopWord(in); got != want {
			t.Errorf("IsStopWord(%q) = %v, want %v", in, got, want)
		}
	}
	f("the", true)
	f("dont", true)
	f("yourselves", true)
	f("shell", false) // she'll without its apostrophe is left out on purpose
	f("user", false)
	f("The", false) // callers pass lowercase tokens
	if n := len(stopWords); n < 150 || n > 210 {
		t.Errorf("stop word list has %d words, want about 150-200", n)
	}
}
