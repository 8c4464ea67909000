package raftfsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Condition is one metadata_filter condition (operator.md §8): Field is a
// metadata key, dotted for nesting; Op is eq, contains or in; Value is the
// raw JSON operand.
type Condition struct {
	Field string
	Op    string
	Value []byte
}

// A metadata filter holds an atom whose metadata, decoded as a JSON object
// (decodeExact), has every condition's field and the field's value
// satisfies the condition: eq, the value equals the operand; contains, the
// value is a string holding the operand (a string) or an array with an
// element equal to it; in, the operand is an array with an element equal
// to the value. Equal is JSON equality, numbers by their exact decimal
// value (numberEqual), objects key by key.
//
// A read compiles its conditions once (compileFilter): each operand is
// decoded once and kept as the canonical key of its value (appendCanon),
// equal keys for equal values, an in list as a set of keys. An atom's
// metadata is then scanned once, checked as the decoder would check it,
// for the values of the conditions' top-level keys only (scanMetadata);
// the values found, not the whole document, are decoded. What an atom
// costs no longer grows with the operands: a 100k-element in list is one
// set lookup.

// filter is a read's metadata conditions, compiled; nil matches every atom.
// It is read-only once compiled: the search's stages match atoms with it
// concurrently.
type filter struct {
	conds []compiledCond
	never bool // a condition no metadata satisfies: nothing matches

	// tops are the conditions' top-level keys, each once; a condition
	// reads the value of tops[top]. index finds a key among many.
	tops  []string
	index map[string]int
	// needles are the top-level keys as they appear, quoted, in metadata
	// without escapes: metadata without one and without a backslash
	// lacks the key (no needle: no such shortcut for the key).
	needles [][]byte
	// sig is what the conditions need of an atom's metadata signature
	// (metasig.go).
	sig sigTest
}

type compiledCond struct {
	path []string // the field's dotted parts
	top  int      // index of path[0] in filter.tops
	op   string
	want []byte              // eq and contains: the operand's canonical key
	sub  string              // contains: the operand when a string
	str  bool                // sub is set
	set  map[string]struct{} // in: the elements' canonical keys
}

// compileFilter compiles conds; nil when there are none.
func compileFilter(conds []Condition) *filter {
	if len(conds) == 0 {
		return nil
	}
	f := &filter{conds: make([]compiledCond, 0, len(conds))}
	at := map[string]int{}
	for _, c := range conds {
		cc, ok := compileCond(c)
		if !ok {
			return &filter{never: true}
		}
		top, seen := at[cc.path[0]]
		if !seen {
			top = len(f.tops)
			at[cc.path[0]] = top
			f.tops = append(f.tops, cc.path[0])
			f.needles = append(f.needles, needle(cc.path[0]))
		}
		cc.top = top
		f.conds = append(f.conds, cc)
	}
	if len(f.tops) > maxLinearKeys {
		f.index = at
	}
	f.compileSig()
	return f
}

// maxLinearKeys is how many top-level keys a scan compares one by one.
const maxLinearKeys = 8

// compileCond decodes c's operand; false when c holds no metadata at all
// (an unknown operator, an operand that does not decode, an in without a
// list, a field part no decoded key can equal).
func compileCond(c Condition) (compiledCond, bool) {
	cc := compiledCond{path: strings.Split(c.Field, "."), op: c.Op}
	for _, p := range cc.path {
		if !utf8.ValidString(p) { // decoded keys are valid UTF-8
			return cc, false
		}
	}
	var want any
	if decodeExact(c.Value, &want) != nil {
		return cc, false
	}
	switch c.Op {
	case "eq":
		cc.want = appendCanon(nil, want)
	case "contains":
		cc.want = appendCanon(nil, want)
		cc.sub, cc.str = want.(string)
	case "in":
		list, ok := want.([]any)
		if !ok {
			return cc, false
		}
		cc.set = make(map[string]struct{}, len(list))
		var key []byte
		for _, x := range list {
			key = appendCanon(key[:0], x)
			cc.set[string(key)] = struct{}{}
		}
	default:
		return cc, false
	}
	return cc, true
}

// needle is key quoted as metadata holds it when it needs no escape; nil
// when it may be written otherwise: with a character JSON escapes, or
// U+FFFD, which an invalid byte decodes to.
func needle(key string) []byte {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == '"' || c == '\\' {
			return nil
		}
	}
	if strings.ContainsRune(key, utf8.RuneError) {
		return nil
	}
	return []byte(`"` + key + `"`)
}

// matchAll reports whether metadata satisfies every condition.
func matchAll(conds []Condition, metadata []byte) bool {
	return compileFilter(conds).match(metadata)
}

// match reports whether metadata satisfies every condition of f.
func (f *filter) match(metadata []byte) bool {
	if f == nil {
		return true
	}
	if f.never || len(metadata) == 0 {
		return false
	}
	if bytes.IndexByte(metadata, '\\') < 0 {
		for _, n := range f.needles {
			if n != nil && !bytes.Contains(metadata, n) {
				return false // the key is missing
			}
		}
	}
	var sc scan
	if !sc.scanMetadata(metadata, f.tops, f.index) {
		return false
	}
	found := sc.found()
	var room [64]byte
	key := room[:0]
	for i := range f.conds {
		c := &f.conds[i]
		v, ok := descend(metadata, found[c.top], c.path[1:])
		if !ok || !c.holds(v, &key) {
			return false
		}
	}
	return true
}

// holds reports whether the JSON value v (valid, of a checked document)
// satisfies c; key is working room.
func (c *compiledCond) holds(v []byte, key *[]byte) bool {
	switch c.op {
	case "eq":
		*key = appendCanonRaw((*key)[:0], v)
		return string(*key) == string(c.want)
	case "in":
		*key = appendCanonRaw((*key)[:0], v)
		_, ok := c.set[string(*key)]
		return ok
	}
	// contains
	switch v[0] {
	case '"':
		return c.str && strings.Contains(rawString(v), c.sub)
	case '[':
		var list []any
		if decodeExact(v, &list) != nil {
			return false
		}
		for _, x := range list {
			*key = appendCanon((*key)[:0], x)
			if string(*key) == string(c.want) {
				return true
			}
		}
	}
	return false
}

// Canonical keys: one encoding per JSON value up to jsonEqual's equality,
// each self-delimiting, so a concatenation of them is one too.
const (
	canonNull   = 'z'
	canonTrue   = 't'
	canonFalse  = 'f'
	canonString = 's'
	canonNumber = 'n' // by its decimalForm
	canonOdd    = 'N' // a number decimal cannot read: by its text
	canonArray  = 'a'
	canonObject = 'o'
)

// appendCanon appends the canonical key of a decoded JSON value (as
// decodeExact decodes: json.Number, string, bool, nil, []any,
// map[string]any).
func appendCanon(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, canonNull)
	case bool:
		if v {
			return append(b, canonTrue)
		}
		return append(b, canonFalse)
	case string:
		return appendCanonString(b, v)
	case json.Number:
		return appendCanonNumber(b, string(v))
	case []any:
		b = binary.AppendUvarint(append(b, canonArray), uint64(len(v)))
		for _, x := range v {
			b = appendCanon(b, x)
		}
		return b
	case map[string]any:
		b = binary.AppendUvarint(append(b, canonObject), uint64(len(v)))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = appendCanon(appendCanonString(b, k), v[k])
		}
		return b
	}
	panic("raftfsm: not a decoded JSON value")
}

func appendCanonString[T string | []byte](b []byte, s T) []byte {
	b = binary.AppendUvarint(append(b, canonString), uint64(len(s)))
	return append(b, s...)
}

// appendCanonNumber keys a number by its decimalForm, so that its
// notations share one key (numberEqual); a number decimal cannot read
// equals only its own text.
func appendCanonNumber(b []byte, text string) []byte {
	d, ok := decimal(text)
	if !ok {
		b = binary.AppendUvarint(append(b, canonOdd), uint64(len(text)))
		return append(b, text...)
	}
	b = append(b, canonNumber)
	if d.neg {
		b = append(b, '-')
	} else {
		b = append(b, '+')
	}
	b = binary.AppendVarint(b, d.exp)
	b = binary.AppendUvarint(b, uint64(len(d.digits)))
	return append(b, d.digits...)
}

// appendCanonRaw appends the canonical key of v, one valid JSON value: a
// scalar read from its text, an array or object decoded.
func appendCanonRaw(b []byte, v []byte) []byte {
	switch v[0] {
	case '"':
		return appendCanonString(b, rawString(v))
	case 't':
		return append(b, canonTrue)
	case 'f':
		return append(b, canonFalse)
	case 'n':
		return append(b, canonNull)
	case '[', '{':
		var x any
		if decodeExact(v, &x) != nil {
			panic("raftfsm: a checked value does not decode")
		}
		return appendCanon(b, x)
	}
	return appendCanonNumber(b, string(v))
}

// rawString decodes the valid JSON string q as the decoder does: as it is
// when it has no escape and is valid UTF-8.
func rawString(q []byte) string {
	in := q[1 : len(q)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in)
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		panic("raftfsm: a checked string does not decode")
	}
	return s
}

// decodeExact decodes JSON keeping each number as written (json.Number):
// as float64, 9007199254740993 read as its neighbour 9007199254740992 and
// an eq condition on one matched the other.
func decodeExact(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// decimalForm is a JSON number as sign, significant digits and a power of
// ten: 1.50e1 and 15 are {false, "15", 0}; zero is {false, "", 0}.
type decimalForm struct {
	neg    bool
	digits string
	exp    int64
}

// decimal reads a JSON number (as the decoder checked it) into its
// decimalForm, in one pass over its text: no arithmetic, so a huge
// exponent costs nothing.
func decimal(s string) (decimalForm, bool) {
	var f decimalForm
	f.neg = strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		n, err := strconv.ParseInt(exp, 10, 64)
		if err != nil || n > 1<<60 || n < -(1<<60) {
			return f, false
		}
		f.exp = n
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	f.exp -= int64(len(frac))
	trimmed := strings.TrimRight(digits, "0")
	f.exp += int64(len(digits) - len(trimmed))
	f.digits = trimmed
	if f.digits == "" {
		return decimalForm{}, true // -0, 0.0, 0e5: zero
	}
	return f, true
}
