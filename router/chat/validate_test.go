package chat

import (
	"errors"
	"fmt"
	"testing"
)

func TestDecodeBody(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		optional bool
		typ      string
	}{
		{"empty optional", "", true, ""},
		{"empty required", " ", false, "missing"},
		{"array", `[1]`, false, "model_attributes_type"},
		{"unknown field", `{"content":"x","pin":1}`, false, "extra_forbidden"},
		{"wrong type", `{"content":1}`, false, "type_error"},
		{"trailing data", `{"content":"x"} {}`, false, "json_invalid"},
		{"a stray closing brace", `{"content":"x"}}`, false, "json_invalid"},
		{"a stray closing bracket", `{"content":"x"}] `, false, "json_invalid"},
		{"trailing space", "{\"content\":\"x\"} \n", false, ""},
		{"truncated", `{"content":`, false, "json_invalid"},
		{"fine", `{"content":"x"}`, false, ""},
		{"a field name in another case", `{"Content":"x"}`, false, "extra_forbidden"},
		{"a field name in capitals", `{"CONTENT":"x"}`, false, "extra_forbidden"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b messageBody
			err := decodeBody([]byte(tc.body), &b, tc.optional)
			var ae *apiError
			switch {
			case tc.typ == "" && err != nil:
				t.Fatalf("unexpected %v", err)
			case tc.typ == "":
			case !errors.As(err, &ae) || ae.Status != 400:
				t.Fatalf("got %v", err)
			default:
				if errs := ae.Details["errors"].([]fieldError); errs[0].Type != tc.typ {
					t.Fatalf("type %s, want %s", errs[0].Type, tc.typ)
				}
			}
		})
	}
}

// A nested field name must match exactly too, and the location names it.
func TestDecodeBodyNestedNames(t *testing.T) {
	type item struct {
		Name string `json:"name"`
	}
	var v struct {
		Items []item `json:"items"`
		One   *item  `json:"one"`
	}
	for body, want := range map[string][]any{
		`{"items":[{"name":"a"},{"Name":"b"}]}`: {"body", "items", 1, "Name"},
		`{"one":{"NAME":"a"}}`:                  {"body", "one", "NAME"},
	} {
		err := decodeBody([]byte(body), &v, false)
		var ae *apiError
		if !errors.As(err, &ae) {
			t.Fatalf("%s: %v", body, err)
		}
		if got := ae.Details["errors"].([]fieldError)[0]; got.Type != "extra_forbidden" || fmt.Sprint(got.Loc) != fmt.Sprint(want) {
			t.Errorf("%s: %+v, want extra_forbidden at %v", body, got, want)
		}
	}
	if err := decodeBody([]byte(`{"items":[{"name":"a"}],"one":{"name":"b"}}`), &v, false); err != nil {
		t.Errorf("exact names: %v", err)
	}
}

// FuzzDecodeBody: any body decodes or is refused with a 400, never a panic.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{"", "{}", `{"name":"x","visibility":"public"}`, `{"name":7}`, `[`, `{"lobby":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var b roomBody
		err := decodeBody(body, &b, false)
		if err == nil {
			err = b.check(true, false)
		}
		var ae *apiError
		if err != nil && (!errors.As(err, &ae) || ae.Status != 400) {
			t.Fatalf("body %q: %v", body, err)
		}
	})
}
