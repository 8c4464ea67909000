package raftfsm

import "testing"

func TestMatchAll(t *testing.T) {
	const doc = `{"lang":"go","n":3,"tags":["db",7,{"x":1}],"owner":{"team":"core","size":{"n":2}},"nil":null}`
	tests := []struct {
		name     string
		metadata string
		field    string
		op       string
		value    string
		want     bool
	}{
		{"eq string", doc, "lang", "eq", `"go"`, true},
		{"eq is exact", doc, "lang", "eq", `"Go"`, false},
		{"eq number across notations", doc, "n", "eq", `3e0`, true},
		{"eq object", doc, "owner.size", "eq", `{"n":2}`, true},
		{"eq null", doc, "nil", "eq", `null`, true},
		{"deeply dotted", doc, "owner.size.n", "in", `[1,2]`, true},
		{"dotted through a scalar", doc, "lang.x", "eq", `"go"`, false},
		{"missing field", doc, "nope", "eq", `"go"`, false},
		{"contains substring", doc, "lang", "contains", `"o"`, true},
		{"contains non-string in a string", doc, "lang", "contains", `1`, false},
		{"contains number element", doc, "tags", "contains", `7`, true},
		{"contains object element", doc, "tags", "contains", `{"x":1}`, true},
		{"contains on a number", doc, "n", "contains", `3`, false},
		{"in list", doc, "lang", "in", `["rust","go"]`, true},
		{"in not a list", doc, "lang", "in", `"go"`, false},
		{"in empty list", doc, "lang", "in", `[]`, false},
		{"unknown operator", doc, "lang", "like", `"go"`, false},
		{"bad operand", doc, "lang", "eq", `"go`, false},
		{"no metadata", "", "lang", "eq", `"go"`, false},
		{"metadata not an object", `[1]`, "lang", "eq", `"go"`, false},
		{"metadata not JSON", `{`, "lang", "eq", `"go"`, false},
		// Numbers compare by exact value, not as float64 (2^53+1 read as
		// 2^53 matched its neighbour).
		{"big integers differ", `{"id":9007199254740993}`, "id", "eq", `9007199254740992`, false},
		{"big integer equal", `{"id":9007199254740993}`, "id", "in", `[1,9007199254740993]`, true},
		{"long decimals differ", `{"x":0.10000000000000000001}`, "x", "eq", `0.1`, false},
		{"one number, four notations", `{"x":[1.50e1]}`, "x", "contains", `15`, true},
		{"fraction and exponent", `{"x":150}`, "x", "in", `[1.5E+2]`, true},
		{"trailing zeros", `{"x":1500}`, "x", "eq", `15.00e2`, true},
		{"zero and minus zero", `{"x":-0.0}`, "x", "eq", `0`, true},
		{"sign matters", `{"x":-2}`, "x", "eq", `2`, false},
		{"huge exponents", `{"x":1e999999999}`, "x", "eq", `10e999999998`, true},
		{"numbers inside objects", `{"o":{"a":[1,2.0]}}`, "o", "eq", `{"a":[1.0,2]}`, true},
		{"string is no number", `{"x":"1"}`, "x", "eq", `1`, false},
		{"operand with trailing data", doc, "lang", "eq", `"go" 1`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conds := []Condition{{Field: tc.field, Op: tc.op, Value: []byte(tc.value)}}
			if got := matchAll(conds, []byte(tc.metadata)); got != tc.want {
				t.Fatalf("matchAll = %v, want %v", got, tc.want)
			}
		})
	}
	if !matchAll(nil, nil) {
		t.Fatal("no conditions must match anything")
	}
}
