package router_test

import (
	"strings"
	"testing"
)

// A body that is not UTF-8, or that carries a control character unescaped
// inside a string, is not JSON (RFC 8259): refused as json_invalid, never
// stored.
func TestBodyNotUTF8(t *testing.T) {
	ts := newTestServer(t)
	for name, body := range map[string]string{
		"bad byte":        "{\"content\":\"bad \xff\xfe bytes in a note\"}",
		"overlong":        "{\"content\":\"over \xc0\xaf long\"}",
		"utf-8 surrogate": "{\"content\":\"\xed\xa0\x80 surrogate\"}",
		"raw newline":     "{\"content\":\"raw\nnewline\"}",
		"raw control":     "{\"content\":\"raw \x01 control\"}",
		"bad byte, read":  "{\"query\":\"bad \xff query\"}",
	} {
		path := "/memory/write"
		if strings.Contains(name, "read") {
			path = "/memory/read"
		}
		r := ts.do("POST", path, ts.Key, body)
		if r.Status != 400 || !strings.Contains(string(r.Raw), `"type":"json_invalid"`) {
			t.Errorf("%s: status %d %s, want 400 json_invalid", name, r.Status, r.Raw)
		}
	}
	if n := memTotal(t, ts, ts.Key); n != 0 {
		t.Fatalf("%d atoms stored from refused bodies", n)
	}
	// Escapes stay allowed, a lone surrogate's included (it decodes to
	// U+FFFD).
	id := memWrite(t, ts, ts.Key, "escaped\nnewline and \u00e9 in a note", nil)
	r := ts.do("POST", "/memory/write", ts.Key, `{"content":"a lone \ud800 surrogate escape in a note"}`)
	if r.Status != 200 || r.Body["stored"] != true {
		t.Fatalf("a lone surrogate escape: status %d %s", r.Status, r.Raw)
	}
	if got := memAtom(t, ts, ts.Key, id)["content"]; got != "escaped\nnewline and é in a note" {
		t.Fatalf("content %q", got)
	}
}
