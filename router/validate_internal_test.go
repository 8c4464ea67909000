package router

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUnionStrings(t *testing.T) {
	var many []string
	for i := range 40 { // above smallUnion: the map path
		many = append(many, fmt.Sprint(i%25))
	}
	var want25 []string
	for i := range 25 {
		want25 = append(want25, fmt.Sprint(i))
	}
	for _, tc := range []struct {
		name  string
		lists [][]string
		want  []string
	}{
		{"none", nil, nil},
		{"only empty", [][]string{{""}, {}}, nil},
		{"small", [][]string{{"a", "", "b", "a"}, {"c", "b"}}, []string{"a", "b", "c"}},
		{"large", [][]string{many, {"x", "0"}}, append(slices.Clone(want25), "x")},
	} {
		got := unionStrings(tc.lists...)
		if !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("%s: unionStrings = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// utf8Size counts compact JSON as UTF-8 JSON: escapes of characters JSON
// may carry raw count as those characters, every member counts.
func TestUTF8Size(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`{"k":"v"}`, 9},
		{`{"k":"\u00e9"}`, 10},              // é: 2 bytes
		{`{"k":"\u2028"}`, 11},              // 3 bytes
		{`{"k":"\ud83d\ude00"}`, 12},        // one 4-byte character from a surrogate pair
		{`{"k":"\ud83d"}`, 14},              // a lone surrogate stays escaped
		{`{"k":"\n\"\\\/"}`, 15},            // \n \" \\ stay escaped, \/ is /
		{`{"k":"\u0022\u0001A\u0041"}`, 18}, // " escaped (2), a control character (6), A, A
		{`{"k":"a","k":"b"}`, 17},           // both members
	} {
		if got := utf8Size([]byte(tc.in)); got != tc.want {
			t.Errorf("utf8Size(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// A provenance header is kept trimmed and cut to maxProvenanceLabel
// characters at a character's boundary.
func TestProvenanceLabel(t *testing.T) {
	long := strings.Repeat("é", maxProvenanceLabel)
	for _, tc := range []struct{ in, want string }{
		{"  agent-1 ", "agent-1"},
		{"", ""},
		{long, long},
		{long + "xyz", long},
		{strings.Repeat("a", maxProvenanceLabel-1) + " tail", strings.Repeat("a", maxProvenanceLabel-1)},
	} {
		if got := provenanceLabel([]byte(tc.in)); got != tc.want {
			t.Errorf("provenanceLabel(%.20q...) = %.20q... (%d characters), want %d", tc.in, got,
				utf8.RuneCountInString(got), utf8.RuneCountInString(tc.want))
		}
	}
}
