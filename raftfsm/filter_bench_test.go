package raftfsm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchMetadata is about 20 KB of metadata: 100 string fields and a tag.
func benchMetadata() []byte {
	m := map[string]any{"tag": "common"}
	for i := range 100 {
		m[fmt.Sprintf("k%03d", i)] = strings.Repeat(fmt.Sprintf("word%d ", i), 30)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// benchInList is an in condition on tag with n strings, none the atom's.
func benchInList(n int) Condition {
	list := make([]string, n)
	for i := range list {
		list[i] = fmt.Sprintf("value-%07d", i)
	}
	b, err := json.Marshal(list)
	if err != nil {
		panic(err)
	}
	return Condition{Field: "tag", Op: "in", Value: b}
}

// BenchmarkFilterAtom is what one atom costs a filter, the reference
// (filter_ref_test.go: the operand decoded for each atom, the metadata
// decoded whole) against the compiled filter (compiled once per read,
// outside the loop): an in list of 1k to 100k strings over 20 KB of
// metadata holding the field, an eq on it, and an eq over metadata {}.
//
//	go test -run '^$' -bench FilterAtom ./raftfsm/
func BenchmarkFilterAtom(b *testing.B) {
	big := benchMetadata()
	type benchCase struct {
		name string
		cond Condition
		meta []byte
	}
	cases := []benchCase{
		{"eq", Condition{Field: "tag", Op: "eq", Value: []byte(`"none"`)}, big},
		{"eq-empty-metadata", Condition{Field: "tag", Op: "eq", Value: []byte(`"none"`)}, []byte(`{}`)},
	}
	for _, n := range []int{1_000, 10_000, 100_000} {
		cases = append(cases, benchCase{fmt.Sprintf("in-%dk", n/1000), benchInList(n), big})
	}
	for _, tc := range cases {
		conds := []Condition{tc.cond}
		b.Run(tc.name+"/reference", func(b *testing.B) {
			for b.Loop() {
				if refMatchAll(conds, tc.meta) {
					b.Fatal("matched")
				}
			}
		})
		b.Run(tc.name+"/compiled", func(b *testing.B) {
			f := compileFilter(conds)
			for b.Loop() {
				if f.match(tc.meta) {
					b.Fatal("matched")
				}
			}
		})
	}
}

// BenchmarkFilterCompile is the once-per-read cost of an in list.
func BenchmarkFilterCompile(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		conds := []Condition{benchInList(n)}
		b.Run(fmt.Sprintf("in-%dk", n/1000), func(b *testing.B) {
			for b.Loop() {
				compileFilter(conds)
			}
		})
	}
}
