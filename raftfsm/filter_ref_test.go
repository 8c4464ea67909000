package raftfsm

// The metadata filter as it was before it was compiled once per read
// (filter.go): each condition's operand decoded again for every atom, every
// atom's metadata decoded whole. Kept unchanged as the reference the
// compiled filter must agree with on every input (filter_test.go).

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

func refMatchAll(conds []Condition, metadata []byte) bool {
	if len(conds) == 0 {
		return true
	}
	var doc map[string]any
	if len(metadata) == 0 || refDecodeExact(metadata, &doc) != nil {
		return false
	}
	for _, c := range conds {
		if !refMatch(c, doc) {
			return false
		}
	}
	return true
}

func refMatch(c Condition, doc map[string]any) bool {
	v, ok := refLookup(doc, c.Field)
	if !ok {
		return false
	}
	var want any
	if refDecodeExact(c.Value, &want) != nil {
		return false
	}
	switch c.Op {
	case "eq":
		return refJSONEqual(v, want)
	case "contains":
		switch v := v.(type) {
		case string:
			s, ok := want.(string)
			return ok && strings.Contains(v, s)
		case []any:
			for _, x := range v {
				if refJSONEqual(x, want) {
					return true
				}
			}
		}
		return false
	case "in":
		list, ok := want.([]any)
		if !ok {
			return false
		}
		for _, x := range list {
			if refJSONEqual(v, x) {
				return true
			}
		}
	}
	return false
}

func refLookup(doc map[string]any, field string) (any, bool) {
	var cur any = doc
	for _, part := range strings.Split(field, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// decodeExact decodes JSON keeping each number as written (json.Number):
// as float64, 9007199254740993 read as its neighbour 9007199254740992 and
// an eq condition on one matched the other.
func refDecodeExact(data []byte, v any) error {
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

// jsonEqual reports whether two decoded JSON values are equal: numbers by
// their exact value (1, 1.0 and 1e0 are one number), objects key by key.
func refJSONEqual(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		return ok && refNumberEqual(a, b)
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !refJSONEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok || !refJSONEqual(x, y) {
				return false
			}
		}
		return true
	default: // string, bool, nil
		return a == b
	}
}

func refNumberEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, ok1 := refDecimal(string(a))
	y, ok2 := refDecimal(string(b))
	return ok1 && ok2 && x == y
}

// refDecimalForm is a JSON number as sign, significant digits and a power of
// ten: 1.50e1 and 15 are {false, "15", 0}; zero is {false, "", 0}.
type refDecimalForm struct {
	neg    bool
	digits string
	exp    int64
}

// decimal reads a JSON number (as the decoder checked it) into its
// refDecimalForm, in one pass over its text: no arithmetic, so a huge
// exponent costs nothing.
func refDecimal(s string) (refDecimalForm, bool) {
	var f refDecimalForm
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
		return refDecimalForm{}, true // -0, 0.0, 0e5: zero
	}
	return f, true
}
