package router

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/bytedance/sonic"
)

// Both refuse what RFC 8259 refuses and sonic lets through by default: a
// control character unescaped inside a string (ValidateString). Bytes that
// are not UTF-8 are refused before decoding (decodeBody): sonic would pass
// them into the stored content and every reply would echo them.
// Field names match exactly (CaseSensitive): matched regardless of case,
// {"CONTENT": ...} was stored by a write endpoint that refuses unknown
// fields, and of "content" and "Content" the first won without a word.
var (
	strictJSON  = sonic.Config{DisallowUnknownFields: true, CopyString: true, ValidateString: true, CaseSensitive: true}.Froze()
	lenientJSON = sonic.Config{CopyString: true, ValidateString: true, CaseSensitive: true}.Froze()
)

// decodeBody decodes a JSON object body into v (a pointer to a struct). With
// strict set, unknown fields are refused (write endpoints). On failure the
// body is diagnosed so details.errors names the offending location.
func decodeBody(body []byte, v any, strict bool) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return validationError(fieldErr("missing", "Field required"))
	}
	if !utf8.Valid(body) {
		return validationError(fieldErr("json_invalid", "JSON decode error: the body is not valid UTF-8"))
	}
	api := lenientJSON
	if strict {
		api = strictJSON
	}
	err := api.Unmarshal(body, v)
	if err == nil {
		if errs := nullItems(body, reflect.TypeOf(v).Elem()); len(errs) > 0 {
			return validationError(errs...)
		}
	}
	if err == nil {
		return nil
	}
	errs := diagnose(body, reflect.TypeOf(v).Elem(), strict)
	if len(errs) == 0 {
		errs = []fieldError{fieldErr("json_invalid", "Invalid JSON body")}
	}
	return validationError(errs...)
}

// diagnose re-reads a body that failed to decode and reports where it does
// not fit the target type.
func diagnose(body []byte, t reflect.Type, strict bool) []fieldError {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return []fieldError{fieldErr("json_invalid", "JSON decode error: "+err.Error())}
	}
	var errs []fieldError
	walkJSON(t, doc, []any{"body"}, strict, &errs)
	return errs
}

var (
	rawMessageType  = reflect.TypeOf(json.RawMessage(nil))
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

func walkJSON(t reflect.Type, v any, loc []any, strict bool, errs *[]fieldError) {
	if len(*errs) >= maxFieldErrors {
		return // the answer shows no more
	}
	add := func(typ, msg string) {
		*errs = append(*errs, fieldError{Loc: append([]any{}, loc...), Msg: msg, Type: typ})
	}
	if t.Kind() == reflect.Pointer {
		if v == nil {
			return
		}
		t = t.Elem()
	}
	if t == rawMessageType || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			add("model_attributes_type", "Input should be a valid dictionary or object")
			return
		}
		walkStruct(t, m, loc, strict, errs)
	case reflect.Map:
		if _, ok := v.(map[string]any); !ok {
			add("dict_type", "Input should be a valid dictionary")
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			add("list_type", "Input should be a valid list")
			return
		}
		for i, x := range list {
			if len(*errs) >= maxFieldErrors {
				return
			}
			walkJSON(t.Elem(), x, append(append([]any{}, loc...), i), strict, errs)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			add("string_type", "Input should be a valid string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			add("bool_type", "Input should be a valid boolean")
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if _, err := n.Int64(); !ok || err != nil {
			add("int_type", "Input should be a valid integer")
		}
	case reflect.Float64, reflect.Float32:
		n, ok := v.(json.Number)
		if !ok {
			add("float_type", "Input should be a valid number")
		} else if _, err := n.Float64(); err != nil {
			add("finite_number", "Input should be a finite number")
		}
	}
}

func walkStruct(t reflect.Type, m map[string]any, loc []any, strict bool, errs *[]fieldError) {
	fields := make(map[string]reflect.StructField, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		if len(*errs) >= maxFieldErrors {
			return
		}
		f, ok := fields[k]
		sub := append(append([]any{}, loc...), k)
		if !ok {
			if strict {
				*errs = append(*errs, fieldError{Loc: sub, Msg: "Extra inputs are not permitted", Type: "extra_forbidden"})
			}
			continue
		}
		walkJSON(f.Type, m[k], sub, strict, errs)
	}
}

// nullField tells an omitted field from an explicit null.
type nullField struct {
	Set   bool
	Value *string
}

// UnmarshalJSON records that the field was present.
func (n *nullField) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n.Value = &s
	return nil
}

// nullItems reports the nulls a body holds as items of a list of
// strings ("concepts": [null, "x"]): the decoder reads them as "" and the
// item would vanish silently, where a list of strings takes strings only.
// Bodies without a null after '[' or ',' are not parsed again.
func nullItems(body []byte, t reflect.Type) []fieldError {
	if !listNull(body) {
		return nil
	}
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	var errs []fieldError
	walkNulls(t, doc, []any{"body"}, &errs)
	return errs
}

// listNull reports whether body may hold null as a list item: a null
// whose previous non-blank byte is '[' or ','.
func listNull(body []byte) bool {
	for rest := body; ; {
		i := bytes.Index(rest, []byte("null"))
		if i < 0 {
			return false
		}
		before := bytes.TrimRight(rest[:i], " \t\r\n")
		if n := len(before); n > 0 && (before[n-1] == '[' || before[n-1] == ',') {
			return true
		}
		rest = rest[i+4:]
	}
}

func walkNulls(t reflect.Type, v any, loc []any, errs *[]fieldError) {
	if len(*errs) >= maxFieldErrors {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, _ := v.(map[string]any)
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if x, ok := m[name]; ok && name != "-" {
				walkNulls(f.Type, x, append(append([]any{}, loc...), name), errs)
			}
		}
	case reflect.Slice:
		list, _ := v.([]any)
		for i, x := range list {
			if len(*errs) >= maxFieldErrors {
				return
			}
			at := append(append([]any{}, loc...), i)
			if x == nil && t.Elem().Kind() == reflect.String {
				*errs = append(*errs, fieldError{Loc: at, Msg: "Input should be a valid string", Type: "string_type"})
				continue
			}
			walkNulls(t.Elem(), x, at, errs)
		}
	}
}
