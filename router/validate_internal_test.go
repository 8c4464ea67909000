package router

import (
	"fmt"
	"slices"
	"testing"
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
