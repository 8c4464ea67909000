package router

import "testing"

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
