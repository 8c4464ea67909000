package embedder

import "testing"

func TestStem(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"short kept", "was", "was"},
		{"short plural kept", "its", "its"},
		{"plural s", "themes", "theme"},
		{"plural s after r", "editors", "editor"},
		{"verb s", "prefers", "prefer"},
		{"plural es after x", "boxes", "box"},
		{"plural es after ch", "matches", "match"},
		{"plural sses", "classes", "class"},
		{"plural ies", "queries", "query"},
		{"short ies", "ties", "tie"},
		{"ss kept", "class", "class"},
		{"us kept", "status", "status"},
		{"is kept", "analysis", "analysis"},
		{"ie plural listed", "movies", "movies"},
		{"ing", "building", "build"},
		{"ing undouble", "running", "run"},
		{"ing restores e", "making", "make"},
		{"ing short stem", "using", "use"},
		{"ing no vowel", "string", "string"},
		{"thing kept", "something", "something"},
		{"ed", "wanted", "want"},
		{"ed undouble", "preferred", "prefer"},
		{"ed keeps ll", "filled", "fill"},
		{"ed restores e", "hoped", "hope"},
		{"ed at", "created", "create"},
		{"ed eat", "heated", "heat"},
		{"ed bl", "troubled", "trouble"},
		{"ed iz", "organized", "organize"},
		{"ed add kept", "added", "add"},
		{"ied", "carried", "carry"},
		{"short ied", "died", "die"},
		{"eed kept", "speed", "speed"},
		{"eed agreed", "agreed", "agree"},
		{"ly", "quickly", "quick"},
		{"lly", "really", "real"},
		{"ily", "happily", "happy"},
		{"ably", "probably", "probable"},
		{"short ly kept", "early", "early"},
		{"ly listed", "family", "family"},
		{"digits kept", "2020s", "2020s"},
		{"non-ascii plural", "cafés", "café"},
		{"non-ascii short", "ñññ", "ñññ"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Stem(tt.in); got != tt.want {
				t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestStemForms checks that inflected forms of a word meet at one stem.
func TestStemForms(t *testing.T) {
	groups := [][]string{
		{"prefer", "prefers", "preferred", "preferring"},
		{"make", "makes", "making"},
		{"use", "uses", "used", "using"},
		{"create", "creates", "created", "creating"},
		{"query", "queries", "queried"},
		{"stop", "stops", "stopped", "stopping"},
		{"deploy", "deploys", "deployed", "deploying"},
	}
	for _, g := range groups {
		t.Run(g[0], func(t *testing.T) {
			want := Stem(g[0])
			for _, w := range g[1:] {
				if got := Stem(w); got != want {
					t.Errorf("Stem(%q) = %q, want %q like Stem(%q)", w, got, want, g[0])
				}
			}
		})
	}
}

func TestStemIdempotentOnStems(t *testing.T) {
	for _, w := range []string{"user", "prefer", "theme", "editor", "build", "query", "happy"} {
		if got := Stem(w); got != w {
			t.Errorf("Stem(%q) = %q, want it unchanged", w, got)
		}
	}
}
