package raftfsm

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

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

// TestFilterMatchesReference holds the compiled filter to the filter it
// replaced (filter_ref_test.go), which decoded every operand for every
// atom and every atom's metadata whole: on generated metadata (nested
// values, repeated keys, escapes, invalid UTF-8, numbers in several
// notations and at float64's edges, damaged or trailing text) and
// conditions over the same small vocabulary, so that many hold.
func TestFilterMatchesReference(t *testing.T) {
	n := 60_000
	if testing.Short() {
		n = 10_000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	held, decoded, refused := 0, 0, 0
	for i := 0; i < n; i++ {
		g := &jsonGen{rng: rng, small: rng.IntN(2) == 0}
		meta := g.metadata()
		conds := make([]Condition, 1+rng.IntN(3)/2)
		for j := range conds {
			if conds[j] = g.condition(); rng.IntN(2) == 0 {
				conds[j] = g.conditionOn(meta, conds[j])
			}
		}
		want := refMatchAll(conds, meta)
		if got := matchAll(conds, meta); got != want {
			t.Fatalf("case %d: matchAll = %v, reference %v\nmetadata %q\nconditions %s", i, got, want, meta, showConds(conds))
		}
		if !compileFilter(conds).maybe(metaSig(meta)) {
			if want {
				t.Fatalf("case %d: the signature test refuses a match\nmetadata %q\nconditions %s", i, meta, showConds(conds))
			}
			refused++
		}
		var doc map[string]any
		if decodeExact(meta, &doc) == nil && doc != nil {
			decoded++
		}
		if want {
			held++
		}
	}
	t.Logf("%d cases: %d metadata decoded, %d held, %d refused by their signature", n, decoded, held, refused)
	if held < n/10 || decoded < n/2 {
		t.Fatalf("the generator reaches too few matches (%d) or valid documents (%d)", held, decoded)
	}
	if refused < (n-held)/2 {
		t.Fatalf("the signature test refused %d of the %d non-matches", refused, n-held)
	}
}

// TestScanMetadataChecksAsDecoder compares the scan's verdict on a document
// with the decoder's, on generated and edge-case text.
func TestScanMetadataChecksAsDecoder(t *testing.T) {
	check := func(m []byte) {
		t.Helper()
		var doc map[string]any
		want := decodeExact(m, &doc) == nil && doc != nil
		if got := new(scan).scanMetadata(m, nil, nil); got != want {
			t.Fatalf("scanMetadata(%q) = %v, decoder %v", m, got, want)
		}
	}
	nest := func(n int) []byte {
		return []byte(`{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	// The decoder's nesting limit, counting the top object.
	for _, n := range []int{maxNesting - 1, maxNesting, maxNesting + 1} {
		check(nest(n))
		check([]byte(strings.Repeat(`{"a":`, n-1) + `{}` + strings.Repeat(`}`, n-1)))
	}
	for _, m := range []string{
		``, ` `, `{}`, ` {} `, `{}]`, `{} }`, `{}x`, `{} x`, `{}{}`, `{} ]x`, `null`, `[1]`, `1`, `"x"`,
		`{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{"a":}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`,
		`{"a":1e+}`, `{"a":-0.0E-0}`, `{"a":tru}`, `{"a":truex}`, `{"a":nul}`, `{"a":"\x01"}`, `{"a":"\u12"}`,
		`{"a":"\uZZZZ"}`, `{"a":"\q"}`, `{"a":"\/\b\f\n\r\t\"\\"}`, "{\"a\":\"\xff\xfe\"}", `{"a":[1 2]}`,
		`{"a":[1,]}`, `{"a":[,1]}`, `{"a":{"b":[{}]}}`, "{\t\n\r\"a\" :\n1 }", `{"a":1`, `{"a":"x`, `{"a`,
		"\ufeff{}", `{"a":1}}`, `{"a":1}]]]garbage`,
	} {
		check([]byte(m))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20_000; i++ {
		g := &jsonGen{rng: rng}
		check(g.metadata())
	}
}

// FuzzFilter compares the compiled filter with the reference on any input.
func FuzzFilter(f *testing.F) {
	f.Add([]byte(`{"lang":"go","n":3,"tags":["db",7,{"x":1}]}`), "tags", "contains", []byte(`{"x":1.0}`))
	f.Add([]byte(`{"id":9007199254740993}`), "id", "in", []byte(`[9007199254740992,9007199254740993]`))
	f.Add([]byte(`{"t\u0061g":"x","tag":"y"}`), "tag", "eq", []byte(`"\u0079"`))
	f.Add([]byte(`{"o":{"a":1},"o":{"b":2}}`), "o.a", "eq", []byte(`1`))
	f.Fuzz(func(t *testing.T, meta []byte, field, op string, value []byte) {
		conds := []Condition{{Field: field, Op: op, Value: value}}
		got, want := matchAll(conds, meta), refMatchAll(conds, meta)
		if got != want {
			t.Fatalf("matchAll = %v, reference %v", got, want)
		}
		if want && !compileFilter(conds).maybe(metaSig(meta)) {
			t.Fatalf("the signature test refuses a match")
		}
	})
}

func showConds(conds []Condition) string {
	var b strings.Builder
	for _, c := range conds {
		fmt.Fprintf(&b, "{%q %s %q} ", c.Field, c.Op, c.Value)
	}
	return b.String()
}

// jsonGen writes JSON text over a small vocabulary, each value in one of
// several notations, so that generated documents and operands often hold
// equal values written differently.
type jsonGen struct {
	rng   *rand.Rand
	depth int
	small bool // only the first entries of each vocabulary: values collide often
}

var (
	genKeys = []string{`"a"`, `"tag"`, `"t\u0061g"`, `"b"`, `"a"`, `"é"`, `"\u00e9"`, `""`, `"a.b"`, "\"\xff\"",
		`"\ufffd"`, `"\ud800"`, `"x y"`, `"Tag"`, `"\"q\""`}
	genFields = []string{"a", "tag", "a.b", "a.a", "b", "é", "", "a.b", "a.a", "b.tag.a", "\ufffd", "x y", "Tag", `"q"`,
		"a.", ".a", "tag.b", "\xff", "a..b", "a.b.a"}
	genStrings = []string{`"go"`, `"g\u006f"`, `"o"`, `"é"`, `"\u00e9"`, `"Go"`, `"\ud83d\ude00"`, `"😀"`, `"\ud800"`,
		"\"\xff\"", `"\ufffd"`, `"a\"b"`, `"a\\b"`, `""`, `"\/"`, `"/"`, `"db"`, `"common tag"`}
	genNumbers = []string{`1`, `1.0`, `-1`, `9007199254740993`, `9007199254740992`, `-0`, `0`, `0.0`, `0e5`,
		`-0.0E-3`, `1e0`, `10e-1`, `0.1e1`, `1.00`,
		`2`, `15`, `1.50e1`, `150`, `1.5E+2`, `1500`, `15.00e2`, `9007199254740992.0`, `0.1`, `0.10000000000000000001`, `1e999999999`, `10e999999998`,
		`1e1152921504606846976`, `10e1152921504606846975`, `1e1152921504606846977`, `10e1152921504606846976`,
		`1e99999999999999999999`, `-1e-1152921504606846976`, `123456789012345678901234567890`, `1.7976931348623157e308`,
		`5e-324`, `4.9406564584124654e-324`}
	genSpace = []string{``, ``, ``, ` `, "\n\t", "\r "}
)

func (g *jsonGen) pick(s []string) string {
	if g.small {
		s = s[:min(len(s), 5)]
	}
	return s[g.rng.IntN(len(s))]
}

func (g *jsonGen) sp() string { return g.pick(genSpace) }

func (g *jsonGen) value() string {
	switch r := g.rng.IntN(20); {
	case r < 6:
		return g.pick(genStrings)
	case r < 12:
		return g.pick(genNumbers)
	case r < 13:
		return "true"
	case r < 14:
		return "false"
	case r < 15:
		return "null"
	case g.depth >= 4:
		return g.pick(genNumbers)
	case r < 18:
		return g.array()
	}
	return g.object()
}

func (g *jsonGen) array() string {
	g.depth++
	defer func() { g.depth-- }()
	parts := make([]string, g.rng.IntN(4))
	for i := range parts {
		parts[i] = g.sp() + g.value() + g.sp()
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (g *jsonGen) object() string {
	g.depth++
	defer func() { g.depth-- }()
	parts := make([]string, g.rng.IntN(5))
	for i := range parts {
		parts[i] = g.sp() + g.pick(genKeys) + g.sp() + ":" + g.sp() + g.value() + g.sp()
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// metadata is a document: mostly an object, sometimes damaged, followed
// by text, or another value.
func (g *jsonGen) metadata() []byte {
	m := g.sp() + g.object() + g.sp()
	switch r := g.rng.IntN(40); {
	case r == 0:
		m = g.value()
	case r == 1:
		m += g.pick([]string{"]", "}", " ]x", "x", " {}", "\n}}"})
	case r == 2 && len(m) > 0:
		m = m[:g.rng.IntN(len(m))]
	case r == 3 && len(m) > 0:
		b := []byte(m)
		const junk = "{}[]\":,\\ x0-.e"
		b[g.rng.IntN(len(b))] = junk[g.rng.IntN(len(junk))]
		m = string(b)
	case r == 4:
		m = ""
	}
	return []byte(m)
}

func (g *jsonGen) condition() Condition {
	c := Condition{Field: g.pick(genFields)}
	switch r := g.rng.IntN(20); {
	case r < 7:
		c.Op, c.Value = "eq", []byte(g.value())
	case r < 12:
		c.Op, c.Value = "contains", []byte(g.value())
	case r < 19:
		c.Op, c.Value = "in", []byte(g.array())
	default:
		c.Op, c.Value = g.pick([]string{"in", "eq", "like", ""}), []byte(g.value())
	}
	if g.rng.IntN(30) == 0 {
		c.Value = append(c.Value, g.pick([]string{" 1", "]", " }", "x", ""})...)
	}
	return c
}

// conditionOn aims c's field and operand at a value meta holds (c as it
// is when meta does not decode): eq the value, in a list holding it,
// contains an element or a part of the string, each encoded anew.
func (g *jsonGen) conditionOn(meta []byte, c Condition) Condition {
	var doc map[string]any
	if decodeExact(meta, &doc) != nil || len(doc) == 0 {
		return c
	}
	var path []string
	var v any = doc
	for {
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 || len(path) > 0 && g.rng.IntN(2) == 0 {
			break
		}
		keys := slices.Sorted(maps.Keys(m))
		k := keys[g.rng.IntN(len(keys))]
		path, v = append(path, k), m[k]
	}
	enc := func(v any) []byte {
		b, err := json.Marshal(g.twin(v))
		if err != nil {
			panic(err)
		}
		return b
	}
	c = Condition{Field: strings.Join(path, ".")}
	switch g.rng.IntN(3) {
	case 0:
		c.Op, c.Value = "eq", enc(v)
	case 1:
		c.Op, c.Value = "in", enc([]any{json.RawMessage(g.value()), v, json.RawMessage(g.value())})
	default:
		c.Op, c.Value = "contains", enc(v)
		switch v := v.(type) {
		case []any:
			if len(v) > 0 {
				c.Value = enc(v[g.rng.IntN(len(v))])
			}
		case string:
			i := g.rng.IntN(len(v) + 1)
			c.Value = enc(v[i:])
		}
	}
	return c
}

// TestScanStrings checks the scan's eight-byte steps through strings: each
// byte that ends a string, starts an escape or is not allowed in one, at
// every offset of strings up to 40 bytes.
func TestScanStrings(t *testing.T) {
	specials := []string{`"`, `\"`, `\\`, `\u00e9`, `\x`, `\u12`, "\x00", "\x1f", "\n", " ", "\x7f", "\x80", "\xff", "é", "\x21", "\x5b", "\x5d"}
	for n := 0; n <= 40; n++ {
		for at := 0; at <= n; at++ {
			for _, sp := range specials {
				body := strings.Repeat("a", at) + sp + strings.Repeat("b", n-at)
				for _, m := range []string{`{"k":"` + body + `"}`, `{"` + body + `":1}`, `{"k":"` + body} {
					var doc map[string]any
					want := decodeExact([]byte(m), &doc) == nil && doc != nil
					if got := new(scan).scanMetadata([]byte(m), nil, nil); got != want {
						t.Fatalf("scanMetadata(%q) = %v, decoder %v", m, got, want)
					}
				}
			}
		}
	}
}

// twin is v or, now and then, a number of v written otherwise: the same
// value in another notation, or its negation.
func (g *jsonGen) twin(v any) any {
	n, ok := v.(json.Number)
	if !ok || g.rng.IntN(2) == 0 {
		return v
	}
	t := string(n)
	exp := strings.ContainsAny(t, "eE")
	switch r := g.rng.IntN(3); {
	case r == 0 && strings.HasPrefix(t, "-"):
		t = t[1:]
	case r == 0:
		t = "-" + t
	case r == 1 && !exp:
		t += "e0"
	case !exp && strings.Contains(t, "."):
		t += "0"
	case !exp:
		t += ".0"
	}
	return json.Number(t)
}
