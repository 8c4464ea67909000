package raftfsm

import (
	"encoding/json"
	"strings"
)

// Condition is one metadata_filter condition (operator.md §8): Field is a
// metadata key, dotted for nesting; Op is eq, contains or in; Value is the
// raw JSON operand.
type Condition struct {
	Field string
	Op    string
	Value []byte
}

func matchAll(conds []Condition, metadata []byte) bool {
	if len(conds) == 0 {
		return true
	}
	var doc map[string]any
	if len(metadata) == 0 || json.Unmarshal(metadata, &doc) != nil {
		return false
	}
	for _, c := range conds {
		if !c.match(doc) {
			return false
		}
	}
	return true
}

func (c Condition) match(doc map[string]any) bool {
	v, ok := lookup(doc, c.Field)
	if !ok {
		return false
	}
	var want any
	if json.Unmarshal(c.Value, &want) != nil {
		return false
	}
	switch c.Op {
	case "eq":
		return jsonEqual(v, want)
	case "contains":
		switch v := v.(type) {
		case string:
			s, ok := want.(string)
			return ok && strings.Contains(v, s)
		case []any:
			for _, x := range v {
				if jsonEqual(x, want) {
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
			if jsonEqual(v, x) {
				return true
			}
		}
	}
	return false
}

func lookup(doc map[string]any, field string) (any, bool) {
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

func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
