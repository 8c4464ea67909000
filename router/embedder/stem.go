package embedder

import (
	"strings"
	"unicode/utf8"
)

// Stem reduces a lowercase word token to a stem with a light, deterministic
// suffix stripper: plurals (-s, -es, -ies), then -ing / -ed, then -ly. Words of
// three letters or fewer and words holding a digit are returned unchanged.
// After -ing / -ed a doubled final consonant is undoubled ("running" -> "run")
// and a silent e is restored on short stems ("making" -> "make"). Stems read
// as words ("prefers" -> "prefer", "queries" -> "query"), not as Porter roots.
func Stem(word string) string {
	keep, add := stemSplit(word)
	if add == "" {
		return word[:keep]
	}
	return word[:keep] + add
}

// stemSplit returns the stem of word as word[:keep] + add, so that callers
// that only hash the stem need not allocate it.
func stemSplit(w string) (keep int, add string) {
	if len(w) <= 3 || utf8.RuneCountInString(w) <= 3 || hasDigit(w) {
		return len(w), ""
	}
	if stemKeep[w] {
		return len(w), ""
	}
	if keep, add, ok := stripPlural(w); ok {
		return keep, add
	}
	if keep, add, ok := stripVerbal(w); ok {
		return keep, add
	}
	if keep, add, ok := stripAdverb(w); ok {
		return keep, add
	}
	return len(w), ""
}

// stemKeep lists words the suffix rules would mangle.
var stemKeep = map[string]bool{
	// -ies / -ie plurals that are not -y plurals.
	"species": true, "series": true, "movies": true, "cookies": true, "calories": true,
	"zombies": true, "rookies": true, "selfies": true, "genies": true, "newbies": true,
	"brownies": true, "goalies": true,
	// -ed and -ing words that are not verb forms.
	"hundred": true, "sacred": true, "kindred": true, "naked": true, "wicked": true,
	"during": true, "morning": true, "evening": true, "ceiling": true, "pudding": true,
	"sibling": true, "darling": true, "herring": true, "viking": true,
	// -ly words that are not adverbs.
	"family": true, "assembly": true, "supply": true, "comply": true, "multiply": true,
	"anomaly": true, "monopoly": true, "butterfly": true, "firefly": true,
	"dragonfly": true, "homily": true,
}

func stripPlural(w string) (int, string, bool) {
	n := len(w)
	switch {
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return n, "", true // class, status, analysis: not plurals, nothing more to strip
	case strings.HasSuffix(w, "ies"):
		if n > 4 {
			return n - 3, "y", true // queries -> query
		}
		return n - 1, "", true // ties -> tie
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zzes"),
		strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		return n - 2, "", true // classes -> class, boxes -> box, matches -> match
	case strings.HasSuffix(w, "s"):
		return n - 1, "", true // themes -> theme, editors -> editor
	}
	return 0, "", false
}

func stripVerbal(w string) (int, string, bool) {
	n := len(w)
	switch {
	case strings.HasSuffix(w, "thing"):
		return n, "", true // nothing, something
	case strings.HasSuffix(w, "eed"):
		if agreedLike[w] {
			return n - 1, "", true // agreed -> agree
		}
		return n, "", true // need, speed, proceed
	case strings.HasSuffix(w, "ied"):
		if n > 4 {
			return n - 3, "y", true // carried -> carry
		}
		return n - 1, "", true // died -> die
	case strings.HasSuffix(w, "ed"):
		return restoreStem(w, n-2)
	case strings.HasSuffix(w, "ing"):
		return restoreStem(w, n-3)
	}
	return 0, "", false
}

var agreedLike = map[string]bool{
	"agreed": true, "disagreed": true, "freed": true, "guaranteed": true, "decreed": true, "refereed": true,
}

// restoreStem tidies the stem w[:keep] left after removing -ed or -ing; it
// declines (ok false) when that stem has no vowel (sing, shed, string).
func restoreStem(w string, keep int) (int, string, bool) {
	r := w[:keep]
	if len(r) < 2 || !hasVowel(r) {
		return 0, "", false
	}
	last := r[len(r)-1]
	switch {
	case strings.HasSuffix(r, "at"):
		if len(r) >= 3 && (r[len(r)-3] == 'e' || r[len(r)-3] == 'o') && !strings.HasSuffix(r, "creat") {
			return keep, "", true // heated -> heat, floated -> float
		}
		return keep, "e", true // created -> create, rated -> rate
	case strings.HasSuffix(r, "bl"), strings.HasSuffix(r, "iz"):
		return keep, "e", true // troubled -> trouble, organized -> organize
	case len(r) >= 4 && last < utf8.RuneSelf && last == r[len(r)-2] && isConsonant(r, len(r)-1) &&
		last != 'l' && last != 's' && last != 'z':
		return keep - 1, "", true // running -> run, preferred -> prefer
	case len(r) == 2 && !isConsonant(r, 0) && isConsonant(r, 1):
		return keep, "e", true // using -> use, aged -> age
	case measure(r) == 1 && endsCVC(r):
		return keep, "e", true // making -> make, hoping -> hope
	}
	return keep, "", true
}

func stripAdverb(w string) (int, string, bool) {
	n := len(w)
	if n < 6 || !strings.HasSuffix(w, "ly") {
		return 0, "", false
	}
	switch {
	case strings.HasSuffix(w, "ily"):
		return n - 3, "y", true // happily -> happy
	case strings.HasSuffix(w, "ably"), strings.HasSuffix(w, "ibly"):
		return n - 1, "e", true // probably -> probable
	}
	return n - 2, "", true // quickly -> quick, really -> real
}

func hasDigit(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= '0' && w[i] <= '9' {
			return true
		}
	}
	return false
}

func hasVowel(w string) bool {
	for i := range len(w) {
		if !isConsonant(w, i) {
			return true
		}
	}
	return false
}

// isConsonant reports whether the ASCII letter w[i] is a consonant; y is a
// consonant at the start of a word or after a vowel. Non-ASCII bytes count as
// consonants.
func isConsonant(w string, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isConsonant(w, i-1)
	}
	return true
}

// measure is Porter's m: the number of vowel-consonant sequences in w.
func measure(w string) int {
	m := 0
	prevVowel := false
	for i := range len(w) {
		c := isConsonant(w, i)
		if c && prevVowel {
			m++
		}
		prevVowel = !c
	}
	return m
}

// endsCVC reports a consonant-vowel-consonant ending whose last consonant is
// not w, x or y (hop, mak, but not show, fix, play).
func endsCVC(w string) bool {
	n := len(w)
	if n < 3 || !isConsonant(w, n-3) || isConsonant(w, n-2) || !isConsonant(w, n-1) {
		return false
	}
	switch w[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}
