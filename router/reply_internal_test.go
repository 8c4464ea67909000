package router

import (
	"strings"
	"testing"
)

// A stored string that is not UTF-8 goes out with U+FFFD in place of its
// bad bytes, so the reply is valid JSON.
func TestReplyReplacesBadUTF8(t *testing.T) {
	var out []byte
	err := encodeReply(map[string]string{"content": "bad \xff x"}, func(b []byte) { out = append(out, b...) })
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":"bad \ufffd x"}`; string(out) != want {
		t.Fatalf("reply %s, want %s", out, want)
	}
}

// A reply past the pool's bound is handed over (held once, by fasthttp),
// a small one is copied from the pooled buffer; both are the same JSON.
func TestEncodeReplyOwned(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		kept bool
	}{{"small", 100, false}, {"large", maxPooledReply + 1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			v := map[string]string{"s": strings.Repeat("x", tc.size)}
			var used, kept []byte
			err := encodeReplyOwned(v, func(b []byte) { used = append([]byte(nil), b...) }, func(b []byte) { kept = b })
			if err != nil {
				t.Fatal(err)
			}
			got := used
			if tc.kept {
				got = kept
				if used != nil {
					t.Error("a large reply was copied")
				}
			} else if kept != nil {
				t.Error("a small reply's pooled buffer was handed over")
			}
			if want := `{"s":"` + v["s"] + `"}`; string(got) != want {
				t.Errorf("reply %.40q…, want %.40q…", got, want)
			}
		})
	}
}
