package pack_test

import (
	"errors"
	"testing"

	"github.com/hebbdb/hebb/router/pack"
)

func TestRedact(t *testing.T) {
	cases := []struct {
		name, in, want string
		n              int
	}{
		{"nothing", "The deploy runs on Friday at 12:00 (2024-05-03).", "The deploy runs on Friday at 12:00 (2024-05-03).", 0},
		{"email", "Write to bob.smith+ops@example.co.uk today", "Write to [email] today", 1},
		{"phone intl", "Call +44 20 7946 0958 after lunch", "Call [phone] after lunch", 1},
		{"phone us", "Support line (555) 123-4567.", "Support line [phone].", 1},
		{"card", "Card 4111 1111 1111 1111 expires soon", "Card [card] expires soon", 1},
		{"hebb key", "Use mk_live_abcdef0123456789 for staging", "Use [secret] for staging", 1},
		{"openai key", "OPENAI=sk-proj4x9QmZk2LwV8", "OPENAI=[secret]", 1},
		{"aws key", "id AKIAIOSFODNN7EXAMPLE here", "id [secret] here", 1},
		{"assignment", "db password: hunter2, user admin", "db password: [secret], user admin", 1},
		{"api_key=", "set api_key=abc123 in env", "set api_key=[secret] in env", 1},
		{"bearer", "header Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc", "header Authorization: Bearer [secret]", 1},
		{"long token", "token 9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc leaked", "token [secret] leaked", 1},
		{"uuid kept", "atom 0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b is old", "atom 0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b is old", 0},
		{"long word kept", "supercalifragilisticexpialidociousness_and_more_words", "supercalifragilisticexpialidociousness_and_more_words", 0},
		{"decimal kept", "pi is 3.14159265 roughly", "pi is 3.14159265 roughly", 0},
		{"short number kept", "room 4021 on floor 3", "room 4021 on floor 3", 0},
		{"pem", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\nend", "key:\n[secret]\nend", 1},
		{"several", "mail a@b.io or c@d.io", "mail [email] or [email]", 2},
		{"password in prose", "the wifi password is hunter2, pwd was 'x y'", "the wifi password is [secret], pwd was [secret]", 2},
		{"secret in prose kept", "this secret is safe with me", "this secret is safe with me", 0},
		{"password for a place", "the db password for prod is hunter2", "the db password for prod is [secret]", 1},
		{"pass:", "pass: hunter2", "pass: [secret]", 1},
		{"passing kept", "passing tests: 12 of 12", "passing tests: 12 of 12", 0},
		{"basic auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [secret]", 1},
		{"jwt", "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl ok", "cookie [secret] ok", 1},
		{"local phone", "call me at 555-1234 tonight", "call me at [phone] tonight", 1},
		{"ranges kept", "years 2019-2024, pages 10-2000", "years 2019-2024, pages 10-2000", 0},
		{"unicode email", "mail jürgen@müller.de now", "mail [email] now", 1},
		{"base64 with few digits", "secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "secret [secret]", 1},
		{"camel case kept", "ThisIsAVeryLongCamelCaseIdentifier9 and src/main/java/com/example/something/else",
			"ThisIsAVeryLongCamelCaseIdentifier9 and src/main/java/com/example/something/else", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, n := pack.Redact(tc.in)
			if got != tc.want || n != tc.n {
				t.Errorf("Redact(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
			}
		})
	}
}

func TestApplyPrivacy(t *testing.T) {
	const secret = "ping ops@example.com"
	const clean = "deploys run on Friday"
	cases := []struct {
		mode     pack.Privacy
		in, want string
		keep     bool
	}{
		{pack.PrivacyAllow, secret, secret, true},
		{pack.PrivacyRedact, secret, "ping [email]", true},
		{pack.PrivacyExclude, secret, "", false},
		{pack.PrivacyExclude, clean, clean, true},
	}
	for _, tc := range cases {
		t.Run(string(tc.mode)+"/"+tc.in, func(t *testing.T) {
			got, keep, _ := pack.ApplyPrivacy(tc.mode, tc.in)
			if got != tc.want || keep != tc.keep {
				t.Errorf("got %q keep %v, want %q keep %v", got, keep, tc.want, tc.keep)
			}
		})
	}
}

func TestParsePrivacy(t *testing.T) {
	for _, m := range pack.PrivacyModes() {
		if got, err := pack.ParsePrivacy(string(m)); err != nil || got != m {
			t.Errorf("ParsePrivacy(%q) = %q, %v", m, got, err)
		}
	}
	for _, bad := range []string{"", "ALLOW", "deny", "strict"} {
		if _, err := pack.ParsePrivacy(bad); !errors.Is(err, pack.ErrUnknownPrivacy) {
			t.Errorf("ParsePrivacy(%q) err %v, want ErrUnknownPrivacy", bad, err)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("mail bob@example.com or call +1 (555) 123-4567, key sk-abcdef0123456789")
	f.Add("-----BEGIN PRIVATE KEY-----\nx")
	f.Fuzz(func(t *testing.T, in string) {
		out, n := pack.Redact(in)
		if n == 0 && out != in {
			t.Errorf("nothing masked but the text changed: %q → %q", in, out)
		}
	})
}
