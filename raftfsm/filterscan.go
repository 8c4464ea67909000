package raftfsm

import (
	"encoding/binary"
)

// The scan of an atom's metadata for a filter (filter.match): one pass
// over the text that checks it as decodeExact, decoding into a map, checks
// it (encoding/json's grammar and nesting limit; after the object only
// spaces, then the end, ']' or '}', which the decoder leaves unread) and
// notes where the values of the filter's top-level keys lie, the last of
// a repeated key as a decode keeps. Nothing is decoded or allocated.

// span is where a JSON value lies in the metadata; start -1: absent.
type span struct{ start, end int }

// maxNesting is encoding/json's limit on nested arrays and objects.
const maxNesting = 10000

// scanMetadata reports whether m decodes as a JSON object and notes where
// the values of keys lie (s.found). It is false for any other value
// (null decodes, to no keys: no condition holds). index, when not nil,
// maps each key to its place in keys.
func (s *scan) scanMetadata(m []byte, keys []string, index map[string]int) bool {
	s.reset(m, keys, index)
	i := skipSpace(m, 0)
	if i >= len(m) || m[i] != '{' {
		return false
	}
	end := s.object(i, 1, true)
	if end < 0 {
		return false
	}
	end = skipSpace(m, end)
	return end == len(m) || m[end] == ']' || m[end] == '}'
}

// descend follows path from the value at sp (a value of a checked
// document) through nested objects, the last of a repeated key as a
// decode keeps.
func descend(m []byte, sp span, path []string) ([]byte, bool) {
	if sp.start < 0 {
		return nil, false
	}
	var s scan
	for i := range path {
		if m[sp.start] != '{' {
			return nil, false
		}
		s.reset(m[:sp.end], path[i:i+1], nil)
		if s.object(sp.start, 1, true) < 0 {
			panic("raftfsm: a checked object does not scan")
		}
		if sp = s.found()[0]; sp.start < 0 {
			return nil, false
		}
	}
	return m[sp.start:sp.end], true
}

type scan struct {
	m     []byte
	keys  []string       // the top-level keys whose values to note
	index map[string]int // key -> its place in keys; nil: compared one by one
	sig   *sigBuilder    // when not nil, is given every top-level member
	near  [maxLinearKeys]span
	far   []span // where the values lie, when near has too few places
}

func (s *scan) reset(m []byte, keys []string, index map[string]int) {
	s.m, s.keys, s.index = m, keys, index
	s.far = nil
	if len(keys) > len(s.near) {
		s.far = make([]span, len(keys))
	}
	found := s.found()
	for i := range found {
		found[i] = span{-1, -1}
	}
}

// found is where the values of the keys lie, in their order; start -1:
// absent.
func (s *scan) found() []span {
	if s.far != nil {
		return s.far
	}
	return s.near[:len(s.keys)]
}

// value checks the value at m[i] (no space before it) and returns its end;
// -1 when it is not valid JSON.
func (s *scan) value(i, depth int) int {
	m := s.m
	if i >= len(m) {
		return -1
	}
	switch c := m[i]; {
	case c == '{':
		return s.object(i, depth+1, false)
	case c == '[':
		return s.array(i, depth+1)
	case c == '"':
		return s.str(i)
	case c == 't':
		return literal(m, i, "true")
	case c == 'f':
		return literal(m, i, "false")
	case c == 'n':
		return literal(m, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return number(m, i)
	}
	return -1
}

// object checks the object at m[i], depth deep, and returns its end; at
// the top it notes the values of the filter's keys.
func (s *scan) object(i, depth int, top bool) int {
	if depth > maxNesting {
		return -1
	}
	m := s.m
	i = skipSpace(m, i+1)
	if i < len(m) && m[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(m) || m[i] != '"' {
			return -1
		}
		k := i
		if i = s.str(i); i < 0 {
			return -1
		}
		key := m[k:i]
		if i = skipSpace(m, i); i >= len(m) || m[i] != ':' {
			return -1
		}
		v := skipSpace(m, i+1)
		if i = s.value(v, depth); i < 0 {
			return -1
		}
		if top {
			if t := s.keyIndex(key); t >= 0 {
				s.found()[t] = span{v, i}
			}
			if s.sig != nil {
				s.sig.member(key, s.m[v:i])
			}
		}
		var done bool
		if i, done = s.after(i, '}'); done {
			return i
		}
	}
}

// after reads what follows a member or an element ending at i: the
// container's closing byte (its end, done) or a comma (the next one's
// start, not done); anything else is -1, done.
func (s *scan) after(i int, closing byte) (int, bool) {
	m := s.m
	if i = skipSpace(m, i); i >= len(m) {
		return -1, true
	}
	switch m[i] {
	case closing:
		return i + 1, true
	case ',':
		return skipSpace(m, i+1), false
	}
	return -1, true
}

// keyIndex returns the place in s.keys of the quoted key q; -1 if none.
func (s *scan) keyIndex(q []byte) int {
	if len(s.keys) == 0 {
		return -1
	}
	in := unquoted(q)
	if s.index != nil {
		if t, ok := s.index[string(in)]; ok {
			return t
		}
		return -1
	}
	for t, k := range s.keys {
		if k == string(in) {
			return t
		}
	}
	return -1
}

func (s *scan) array(i, depth int) int {
	if depth > maxNesting {
		return -1
	}
	m := s.m
	i = skipSpace(m, i+1)
	if i < len(m) && m[i] == ']' {
		return i + 1
	}
	for {
		if i = s.value(i, depth); i < 0 {
			return -1
		}
		var done bool
		if i, done = s.after(i, ']'); done {
			return i
		}
	}
}

// strPlain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str checks the string at m[i] and returns its end. Bytes that are not
// UTF-8 pass, as the decoder lets them (it reads each as U+FFFD).
func (s *scan) str(i int) int {
	m := s.m
	for i++; i < len(m); i++ {
		for i+8 <= len(m) && plain8(binary.LittleEndian.Uint64(m[i:])) {
			i += 8
		}
		if i >= len(m) {
			break
		}
		c := m[i]
		if strPlain[c] {
			continue
		}
		switch c {
		case '"':
			return i + 1
		case '\\':
			i++
			if i >= len(m) {
				return -1
			}
			switch m[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(m) {
					return -1
				}
				for _, h := range m[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		default:
			return -1 // a control character
		}
	}
	return -1
}

// plain8 reports whether the eight bytes of x are all strPlain: none a
// quote, a backslash or below 0x20 (a byte below n sets its high bit in
// x-n·0x01… &^ x; a byte equal to c is a zero byte of x^c·0x01…).
func plain8(x uint64) bool {
	return below8(x, 0x20)|below8(x^'"'*ones8, 1)|below8(x^'\\'*ones8, 1) == 0
}

const ones8 = 0x0101010101010101

// below8 has the high bit of each byte of x below n set (and perhaps
// others above such a byte): zero when none is, for n up to 0x80.
func below8(x, n uint64) uint64 { return (x - n*ones8) &^ x & 0x8080808080808080 }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func literal(m []byte, i int, lit string) int {
	if len(m)-i < len(lit) || string(m[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// number checks the number at m[i]: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func number(m []byte, i int) int {
	if m[i] == '-' {
		i++
	}
	switch {
	case i < len(m) && m[i] == '0':
		i++
	case i < len(m) && m[i] >= '1' && m[i] <= '9':
		i = digits(m, i)
	default:
		return -1
	}
	if i < len(m) && m[i] == '.' {
		if i++; i >= len(m) || !isDigit(m[i]) {
			return -1
		}
		i = digits(m, i)
	}
	if i < len(m) && (m[i] == 'e' || m[i] == 'E') {
		if i++; i < len(m) && (m[i] == '+' || m[i] == '-') {
			i++
		}
		if i >= len(m) || !isDigit(m[i]) {
			return -1
		}
		i = digits(m, i)
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(m []byte, i int) int {
	for i < len(m) && isDigit(m[i]) {
		i++
	}
	return i
}

func skipSpace(m []byte, i int) int {
	for i < len(m) {
		switch m[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
