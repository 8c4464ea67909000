package chat

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"
)

// Limits of the persistence API.
const (
	maxMessageChars  = 4000 // message content, in characters
	maxRoomName      = 100
	maxDescription   = 1000
	maxDisplayName   = 64
	maxImageURL      = 2048
	maxEdits         = 50 // edits per message; every version is kept
	maxPageLimit     = 100
	defaultPageLimit = 50
)

// ID prefixes; the rest of every ID is a ULID.
const (
	roomPrefix    = "chat_"
	userPrefix    = "usr_"
	messagePrefix = "msg_"
	sessionPrefix = "ses_"
	systemAuthor  = "" // the author of a service message posted for no user
)

func newID(prefix string) string { return prefix + ulid.Make().String() }

// validID reports whether s is prefix followed by a canonical ULID.
func validID(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != ulid.EncodedSize {
		return false
	}
	_, err := ulid.ParseStrict(rest)
	return err == nil && strings.ToUpper(rest) == rest
}

// decodeBody decodes a JSON object into v (a pointer to a struct), refusing
// unknown fields. An empty body is an empty object when optional is set.
func decodeBody(body []byte, v any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return validationError(fieldErr("missing", "Field required", "body"))
	}
	if bytes.TrimSpace(body)[0] != '{' {
		return validationError(fieldErr("model_attributes_type", "Input should be a valid object", "body"))
	}
	// Bytes that are not UTF-8 are not JSON (RFC 8259): the decoder turned
	// them into U+FFFD, stored in names and messages.
	if !utf8.Valid(body) {
		return validationError(fieldErr("json_invalid", "JSON decode error: the body is not valid UTF-8", "body"))
	}
	// encoding/json matches field names case-insensitively: "Content"
	// passed for "content" although unknown fields are refused. Names must
	// match exactly, as on the memory API.
	if loc, ok := inexactKey(body, reflect.TypeOf(v)); ok {
		return validationError(fieldErr("extra_forbidden", "Extra inputs are not permitted", append([]any{"body"}, loc...)...))
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return validationError(diagnose(err))
	}
	if len(bytes.TrimSpace(body[d.InputOffset():])) > 0 {
		return validationError(fieldErr("json_invalid", "Unexpected data after the JSON object", "body"))
	}
	return nil
}

// inexactKey finds an object key of raw that names no field of t exactly
// (t's JSON names; through pointers, nested structs and slices of them)
// and returns its location under the body. Bodies that are not JSON pass: Decode reports
// those.
func inexactKey(raw []byte, t reflect.Type) ([]any, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil, false
		}
		for i, it := range items {
			if loc, ok := inexactKey(it, t.Elem()); ok {
				return append([]any{i}, loc...), true
			}
		}
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil, false
		}
		for key, val := range obj {
			f, ok := fieldByJSONName(t, key)
			if !ok {
				return []any{key}, true
			}
			if loc, ok := inexactKey(val, f.Type); ok {
				return append([]any{key}, loc...), true
			}
		}
	}
	return nil, false
}

// fieldByJSONName is the exported field of t whose JSON name is name.
func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || tag == "-" || f.Anonymous && tag == "" {
			continue
		}
		if cmp.Or(tag, f.Name) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func diagnose(err error) fieldError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		loc := []any{"body"}
		for _, f := range strings.Split(te.Field, ".") {
			if f != "" {
				loc = append(loc, f)
			}
		}
		return fieldErr("type_error", "Input should be a valid "+jsonKind(te.Type.Kind().String()), loc...)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, _ := strconv.Unquote(name)
		return fieldErr("extra_forbidden", "Extra inputs are not permitted", "body", field)
	}
	return fieldErr("json_invalid", "Invalid JSON body", "body")
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	}
	return "number"
}

// validator collects the field errors of one request.
type validator struct{ errs []fieldError }

func (v *validator) add(typ, msg string, loc ...any) {
	v.errs = append(v.errs, fieldErr(typ, msg, loc...))
}

// text checks a string field of the body: at most max characters, when
// min is 1 not blank, and no control character but tabs and line breaks
// (a NUL or a terminal escape sequence stored for every client to show).
func (v *validator) text(field, s string, minChars, maxChars int) {
	n := utf8.RuneCountInString(s)
	switch {
	case minChars > 0 && strings.TrimSpace(s) == "":
		v.add("string_too_short", "String should not be blank", "body", field)
	case n > maxChars:
		v.add("string_too_long", "String should have at most "+strconv.Itoa(maxChars)+" characters", "body", field)
	case strings.ContainsFunc(s, control):
		v.add("value_error", "String must not contain control characters", "body", field)
	}
}

// optText checks an optional string field.
func (v *validator) optText(field string, s *string, minChars, maxChars int) {
	if s != nil {
		v.text(field, *s, minChars, maxChars)
	}
}

// optName checks an optional name (a room's, a person's): text of one line
// without bidirectional overrides or isolates, which make "\u202egnp.exe"
// read "exe.png".
func (v *validator) optName(field string, s *string, maxChars int) {
	v.optText(field, s, 1, maxChars)
	if s != nil && !strings.ContainsFunc(*s, control) && strings.ContainsFunc(*s, nameFormatting) {
		v.add("value_error", "Name must not contain line breaks or bidirectional controls", "body", field)
	}
}

// control reports a C0 or C1 control character or DEL, but for a tab and
// line breaks.
func control(r rune) bool {
	return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
}

// nameFormatting reports what a one-line name may not hold on top of
// control: tabs, line breaks and the bidirectional embeddings, overrides
// and isolates (U+202A-U+202E, U+2066-U+2069).
func nameFormatting(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func (v *validator) required(field string, present bool) bool {
	if !present {
		v.add("missing", "Field required", "body", field)
	}
	return present
}

// imageURL checks an optional picture URL: http or https.
func (v *validator) imageURL(s *string) {
	if s == nil || *s == "" {
		return
	}
	u, err := url.Parse(*s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(*s) > maxImageURL {
		v.add("url_parsing", "Input should be an http or https URL of at most 2048 characters", "body", "image")
	}
}

func (v *validator) visibility(s *string) {
	if s != nil && *s != "private" && *s != "public" {
		v.add("enum", "Input should be 'private' or 'public'", "body", "visibility")
	}
}

func (v *validator) err() error {
	if len(v.errs) == 0 {
		return nil
	}
	return validationError(v.errs...)
}

// queryUint reads an optional unsigned query parameter.
func queryUint(args interface{ Peek(string) []byte }, name string, v *validator) (uint64, bool) {
	raw := args.Peek(name)
	if raw == nil {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw), 10, 63)
	if err != nil {
		v.add("int_parsing", "Input should be a non-negative integer", "query", name)
		return 0, false
	}
	return n, true
}
