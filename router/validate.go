package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/embedder"
)

// Limits of interface §8.
const (
	maxContent     = 10000
	maxConcepts    = 256
	maxConceptLen  = embedder.MaxConceptChars // a graph seed's bound: a longer concept could never be one
	maxMetadata    = 65536
	maxFingerprint = 512
	maxDomain      = 100
	maxExternalRef = 255
	maxSupersedes  = 32
	maxQuery       = 5000
	maxTopK        = 500
	defaultTopK    = 10
	defaultMinRel  = 0.3
	defaultDomain  = "general"
	secretRefPref  = "secret:"
)

func (v *validator) strLen(s string, min, max int, loc ...any) {
	n := utf8.RuneCountInString(s)
	if n < min {
		v.add("string_too_short", fmt.Sprintf("String should have at least %d character", min), loc...)
	}
	if n > max {
		v.add("string_too_long", fmt.Sprintf("String should have at most %d characters", max), loc...)
	}
}

// name checks a display name an operator gives (an org's name, a key's
// label): min to max characters, no control characters (a NUL or a line
// break in a name the console and the CLI print).
func (v *validator) name(s string, min, max int, loc ...any) {
	v.strLen(s, min, max, loc...)
	if strings.ContainsFunc(s, unicode.IsControl) {
		v.add("value_error", "Value must not contain control characters", loc...)
	}
}

func (v *validator) intRange(x, min, max int, loc ...any) {
	if x < min {
		v.add("greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", min), loc...)
	}
	if x > max {
		v.add("less_than_equal", fmt.Sprintf("Input should be less than or equal to %d", max), loc...)
	}
}

func (v *validator) floatRange(x, min, max float64, loc ...any) {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		v.add("finite_number", "Input should be a finite number", loc...)
	case x < min:
		v.add("greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %g", min), loc...)
	case x > max:
		v.add("less_than_equal", fmt.Sprintf("Input should be less than or equal to %g", max), loc...)
	}
}

// concepts validates and normalises client concepts.
func (v *validator) concepts(in []string, loc ...any) []string {
	if len(in) > maxConcepts {
		v.add("too_long", fmt.Sprintf("List should have at most %d items", maxConcepts), loc...)
		return nil
	}
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, c := range in {
		if utf8.RuneCountInString(c) > maxConceptLen {
			v.add("string_too_long", fmt.Sprintf("String should have at most %d characters", maxConceptLen),
				append(slices.Clone(loc), i)...)
			continue
		}
		c = embedder.NormalizeConcept(c)
		if c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// object reports whether raw (decoded already, so valid JSON) is a JSON
// object, and records a dict_type error when it is present but not one.
func (v *validator) object(raw json.RawMessage, loc ...any) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return false
	}
	if raw[0] != '{' {
		v.add("dict_type", "Input should be a valid dictionary", loc...)
		return false
	}
	return true
}

// metadata checks that raw is a JSON object within the size limit and
// returns it compacted (nil for absent or null).
func (v *validator) metadata(raw json.RawMessage, loc ...any) []byte {
	raw = bytes.TrimSpace(raw)
	if !v.object(raw, loc...) {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		v.add("json_invalid", "Invalid JSON", loc...)
		return nil
	}
	if buf.Len() > maxMetadata && utf8Size(buf.Bytes()) > maxMetadata {
		v.add("value_error", fmt.Sprintf("metadata must be at most %d bytes serialized", maxMetadata), loc...)
		return nil
	}
	if buf.String() == "{}" {
		return nil
	}
	return buf.Bytes()
}

// utf8Size is the size of compact JSON with its strings' escapes written
// as UTF-8 where JSON allows (the spec's "serialized UTF-8 JSON"): a client
// that escapes "é" as \u00e9 sends 6 bytes for 2, and U+2028 as \u2028 6
// for 3. It measures the bytes as they are kept, every member counted: a
// decode and re-encode kept only the last of repeated keys, so an object
// repeating one key 30 times passed as one sixtieth of its size.
func utf8Size(compact []byte) int {
	n, inString := 0, false
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		switch {
		case !inString:
			inString = c == '"'
			n++
		case c == '"':
			inString = false
			n++
		case c != '\\' || i+1 >= len(compact):
			n++
		case compact[i+1] != 'u':
			if compact[i+1] == '/' {
				n++ // "\/" is "/"
			} else {
				n += 2 // \" \\ \b \f \n \r \t stay escaped
			}
			i++
		default:
			size, used := escapedRuneSize(compact[i:])
			n += size
			i += used - 1
		}
	}
	return n
}

// escapedRuneSize reads a \uXXXX escape (and the low half of a surrogate
// pair after it) at the start of b: the bytes the character takes in UTF-8
// JSON, and the bytes of b the escape used.
func escapedRuneSize(b []byte) (size, used int) {
	r, ok := hex4(b)
	if !ok {
		return 2, 2 // not an escape json.Compact accepts; count it as is
	}
	if utf16.IsSurrogate(r) {
		if lo, ok := hex4(b[6:]); ok && len(b) >= 12 && utf16.DecodeRune(r, lo) != utf8.RuneError {
			return 4, 12
		}
		return 6, 6 // a lone surrogate stays escaped
	}
	switch {
	case r == '"' || r == '\\':
		return 2, 6
	case r < 0x20:
		return 6, 6 // a control character stays escaped (\n and friends in 2, at most 6)
	}
	return utf8.RuneLen(r), 6
}

// hex4 parses the XXXX of a \uXXXX escape at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[2:6]), 16, 32)
	return rune(v), err == nil
}

// uuids parses a list of atom IDs: malformed and repeated IDs are errors.
func (v *validator) uuids(in []string, max int, loc ...any) []raftfsm.ID {
	return v.uuidList(in, max, true, loc...)
}

// uuidSet parses a list of atom IDs whose repeats mean nothing more (the
// atoms a feedback is about): malformed IDs are errors, repeats dropped.
func (v *validator) uuidSet(in []string, max int, loc ...any) []raftfsm.ID {
	return v.uuidList(in, max, false, loc...)
}

func (v *validator) uuidList(in []string, max int, repeatErr bool, loc ...any) []raftfsm.ID {
	if len(in) > max {
		v.add("too_long", fmt.Sprintf("List should have at most %d items", max), loc...)
		return nil
	}
	out := make([]raftfsm.ID, 0, len(in))
	seen := make(map[raftfsm.ID]bool, len(in))
	for i, s := range in {
		id, err := raftfsm.ParseID(strings.TrimSpace(s))
		sub := append(append([]any{}, loc...), i)
		if err != nil {
			v.add("uuid_parsing", "Input should be a valid UUID", sub...)
			continue
		}
		if seen[id] {
			if repeatErr {
				v.add("value_error", "Duplicate ID "+id.String(), sub...)
			}
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

// smallUnion is the size up to which unionStrings dedupes by scanning
// what it kept (a read's concept lists), without a map.
const smallUnion = 32

// unionStrings returns the non-empty strings of lists, first occurrences in
// order; nil when there are none.
func unionStrings(lists ...[]string) []string {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if n == 0 {
		return nil
	}
	var seen map[string]bool
	if n > smallUnion {
		seen = make(map[string]bool, n)
	}
	out := make([]string, 0, n)
	for _, l := range lists {
		for _, s := range l {
			if s == "" || (seen == nil && slices.Contains(out, s)) || seen[s] {
				continue
			}
			if seen != nil {
				seen[s] = true
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// orDefault maps an empty domain to the default one, as writes do.
func orDefault(domain string) string {
	if domain == "" {
		return defaultDomain
	}
	return domain
}
