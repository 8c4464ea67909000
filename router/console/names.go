package console

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// nameProblem says what is wrong with a name a person gives (a key's label,
// a workspace's), or "" when nothing is: more than max characters (counted
// as characters, as the form's maxlength counts them, not bytes), or a
// control character or bidirectional override, which make "\u202egnp.exe"
// read "exe.png" wherever the name is shown.
func nameProblem(name, what string, max int) string {
	if utf8.RuneCountInString(name) > max {
		return fmt.Sprintf("Keep the %s under %d characters.", what, max)
	}
	if strings.ContainsFunc(name, unsafeInName) {
		return fmt.Sprintf("The %s must not contain control characters or bidirectional overrides.", what)
	}
	return ""
}

// unsafeInName reports control characters and the bidirectional
// embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
func unsafeInName(r rune) bool {
	return unicode.IsControl(r) || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
