package console

import "testing"

func TestKeyFallback(t *testing.T) {
	f := func(next, want string) {
		t.Helper()
		if got := (authForm{Next: next}).KeyFallback(); got != want {
			t.Errorf("KeyFallback(%q) = %q, want %q", next, got, want)
		}
	}
	f("/console", "")
	f("/oauth/authorize?client_id=x&state=y", "/oauth/authorize?client_id=x&state=y&signin=key")
	f("/oauth/authorizex", "")
}
