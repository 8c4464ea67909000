package console

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func TestPasswords(t *testing.T) {
	h, err := HashPassword(context.Background(), "a fine password")
	if err != nil || !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q %v", h, err)
	}
	bc, _ := bcrypt.GenerateFromPassword([]byte("a fine password"), bcrypt.MinCost)
	tests := []struct {
		name, hash, pw string
		ok             bool
		bad            bool
	}{
		{"argon2id right", h, "a fine password", true, false},
		{"argon2id wrong", h, "a fine passwor", false, false},
		{"bcrypt right", string(bc), "a fine password", true, false},
		{"bcrypt wrong", string(bc), "nope", false, false},
		{"unknown scheme", "$scrypt$x", "a", false, true},
		{"absurd cost", "$argon2id$v=19$m=99999999,t=2,p=1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA", "a", false, true},
		{"empty", "", "a", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := VerifyPassword(context.Background(), tc.hash, tc.pw)
			if ok != tc.ok || (err != nil) != tc.bad {
				t.Fatalf("got %v %v", ok, err)
			}
		})
	}
}

// At most cap(hashSlots) password hashes run at once and maxHashWaiters
// wait for a slot; one more is refused at once (ErrBusy), and a waiter
// whose request ends gives up.
func TestHashSlots(t *testing.T) {
	release := make(chan struct{})
	held := make(chan struct{}, cap(hashSlots))
	for range cap(hashSlots) {
		go func() {
			_ = withHashSlot(context.Background(), func() { held <- struct{}{}; <-release })
		}()
	}
	for range cap(hashSlots) {
		<-held
	}
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan error, maxHashWaiters)
	for range maxHashWaiters {
		go func() { waiting <- withHashSlot(ctx, func() {}) }()
	}
	for hashWaiters.Load() < maxHashWaiters {
		time.Sleep(time.Millisecond)
	}
	if _, err := HashPassword(context.Background(), "one too many"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a hash past the waiters: %v, want ErrBusy", err)
	}
	cancel()
	for range maxHashWaiters {
		if err := <-waiting; !errors.Is(err, context.Canceled) {
			t.Fatalf("a waiter whose request ended: %v", err)
		}
	}
	close(release)
	if _, err := HashPassword(context.Background(), "a slot again"); err != nil {
		t.Fatalf("after the slots are free: %v", err)
	}
}

func TestSafeNext(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := safeNext(in); got != want {
			t.Fatalf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
	f("", "/console")
	f("/console/keys", "/console/keys")
	f("/oauth/authorize?client_id=x", "/oauth/authorize?client_id=x")
	f("//evil.example/x", "/console")
	// http.Redirect cleans the path: these became "/\\evil.example" and a
	// tab browsers drop, both another host to a browser.
	f("/console/../\\evil.example", "/console")
	f("/\t/evil.example", "/console")
	f("/console/..//evil.example", "/evil.example")
	f("/%2F%2Fevil.example", "/evil.example")
	f("/console/keys/", "/console/keys/")
	f("/oauth/authorize?client_id=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb", "/oauth/authorize?client_id=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb")
	f("/x\x7fy", "/console")
	f("/\\evil.example", "/console")
	f("https://evil.example", "/console")
	f("/console\r\nSet-Cookie: x", "/console")
}

func TestMessageHeadersCannotBeInjected(t *testing.T) {
	from, _ := mail.ParseAddress("hebb <noreply@hebb.test>")
	to, _ := mail.ParseAddress("bob@example.com")
	msg, err := buildMessage(from, to, "hi\r\nBcc: eve@example.com", "text", "<p>html</p>")
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.ReadMessage(strings.NewReader(string(msg)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Get("Bcc") != "" || !strings.Contains(m.Header.Get("Content-Type"), "multipart/alternative") {
		t.Fatalf("headers: %v", m.Header)
	}
}

func TestSMTPURL(t *testing.T) {
	tests := []struct {
		url, from string
		ok        bool
		addr      string
	}{
		{"smtp://u:p@mail.example.com:587", "hebb <a@b.c>", true, "mail.example.com:587"},
		{"smtps://mail.example.com", "a@b.c", true, "mail.example.com:465"},
		{"smtp://mail.example.com", "", false, ""},
		{"http://mail.example.com", "a@b.c", false, ""},
		{"smtp://mail.example.com", "not an address", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			m, err := newSMTPMailer(tc.url, tc.from, "localhost")
			if (err == nil) != tc.ok || (tc.ok && m.addr != tc.addr) {
				t.Fatalf("got %+v %v", m, err)
			}
		})
	}
}

// Behind https the console asks for https only (HSTS); over plain http,
// where browsers ignore it, it does not.
func TestSecurityHeadersHSTS(t *testing.T) {
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, https := range []bool{true, false} {
		rec := httptest.NewRecorder()
		securityHeaders(ok, https).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Base, nil))
		if got := rec.Header().Get("Strict-Transport-Security"); (got == "max-age=31536000") != https || (got != "") != https {
			t.Errorf("https %v: Strict-Transport-Security %q", https, got)
		}
		if rec.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("https %v: no X-Frame-Options", https)
		}
	}
}
