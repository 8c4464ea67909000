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
var (
	strictJSON  = sonic.Config{DisallowUnknownFields: true, CopyString: true, ValidateString: true}.Froze()
	lenientJSON = sonic.Config{CopyString: true, ValidateString: true}.Froze()
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
