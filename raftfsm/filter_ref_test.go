package raftfsm

// The metadata filter as it was before it was compiled once per read
// (filter.go): each condition's operand decoded again for every atom, every
// atom's metadata decoded whole. Kept unchanged as the reference the
// compiled filter must agree with on every input (filter_test.go).

import (
	"encoding/json"
	"strings"
)

func refMatchAll(conds []Condition, metadata []byte) bool {
	if len(conds) == 0 {
		return true
	}
	var doc map[string]any
	if len(metadata) == 0 || decodeExact(metadata, &doc) != nil {
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
	if decodeExact(c.Value, &want) != nil {
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
	x, ok1 := decimal(string(a)) // unchanged: the reference reads numbers as the filter does
	y, ok2 := decimal(string(b))
	return ok1 && ok2 && x == y
}
