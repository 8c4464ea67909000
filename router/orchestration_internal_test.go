package router

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestReplyCache(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	h1, h2 := [32]byte{1}, [32]byte{2}
	k := func(org, id string) replyKey { return replyKey{org: org, requestID: id} }
	store := func(t *testing.T, rc *replyCache, key replyKey, body string, now time.Time) {
		t.Helper()
		e, owner, err := rc.begin(key, h1, now)
		if err != nil || !owner {
			t.Fatalf("begin %v: owner %v err %v", key, owner, err)
		}
		rc.finish(e, []byte(body), now)
	}
	stored := func(rc *replyCache, key replyKey, now time.Time) string {
		e, owner, err := rc.begin(key, h1, now)
		if err != nil || owner {
			if owner {
				rc.finish(e, nil, now)
			}
			return ""
		}
		return string(e.reply())
	}

	t.Run("repeat, conflict, expiry", func(t *testing.T) {
		rc := newReplyCache(time.Hour, 10, 1<<20)
		store(t, rc, k("a", "r"), "reply", t0)
		if got := stored(rc, k("a", "r"), t0.Add(59*time.Minute)); got != "reply" {
			t.Errorf("stored reply %q", got)
		}
		var re *renderError
		if _, _, err := rc.begin(k("a", "r"), h2, t0); !errors.As(err, &re) || re.status != 409 {
			t.Errorf("different request: err %v", err)
		}
		if got := stored(rc, k("b", "r"), t0); got != "" {
			t.Errorf("another account sees %q", got)
		}
		if got := stored(rc, k("a", "r"), t0.Add(time.Hour)); got != "" || rc.len() != 0 {
			t.Errorf("expired reply still served: %q (%d stored)", got, rc.len())
		}
	})

	t.Run("a failed render is forgotten", func(t *testing.T) {
		rc := newReplyCache(time.Hour, 10, 1<<20)
		e, _, _ := rc.begin(k("a", "r"), h1, t0)
		rc.finish(e, nil, t0)
		if e.reply() != nil {
			t.Error("failed entry has a reply")
		}
		if _, owner, _ := rc.begin(k("a", "r"), h2, t0); !owner {
			t.Error("the key stayed taken after a failure")
		}
	})

	t.Run("bounded per account", func(t *testing.T) {
		rc := newReplyCache(time.Hour, 3, 1<<20)
		for i := 0; i < 5; i++ {
			store(t, rc, k("a", string(rune('0'+i))), "x", t0)
		}
		store(t, rc, k("b", "0"), "y", t0)
		if rc.len() != 4 || stored(rc, k("a", "0"), t0) != "" || stored(rc, k("a", "4"), t0) != "x" || stored(rc, k("b", "0"), t0) != "y" {
			t.Errorf("per-account bound: %d stored", rc.len())
		}
	})

	t.Run("bounded in bytes", func(t *testing.T) {
		rc := newReplyCache(time.Hour, 100, 10)
		store(t, rc, k("a", "1"), "aaaaaa", t0)
		store(t, rc, k("b", "1"), "bbbbbb", t0)
		if rc.len() != 1 || stored(rc, k("a", "1"), t0) != "" || stored(rc, k("b", "1"), t0) != "bbbbbb" {
			t.Errorf("byte bound: %d stored", rc.len())
		}
	})

	// One account's large replies evict its own, not another account's:
	// any account could flush every other's replies (request_id then no
	// longer an idempotency key for them).
	t.Run("bytes evicted from the heaviest account", func(t *testing.T) {
		rc := newReplyCache(time.Hour, 100, 10)
		store(t, rc, k("b", "1"), "bb", t0)
		for i := range 3 {
			store(t, rc, k("a", string(rune('1'+i))), "aaaa", t0.Add(time.Duration(i+1)*time.Second))
		}
		if got := stored(rc, k("b", "1"), t0); got != "bb" {
			t.Errorf("the light account's reply was evicted (%q)", got)
		}
		if rc.len() != 3 || stored(rc, k("a", "1"), t0) != "" || stored(rc, k("a", "3"), t0) != "aaaa" {
			t.Errorf("heavy account: %d stored", rc.len())
		}
	})
}

func TestDecodeRenderVersion(t *testing.T) {
	const rest = `"id":"0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","intent":"x","budgets":{"tokens_max":5},"request_id":"r"`
	cases := []struct {
		name, body, code string
	}{
		{"plain", `{"version":"v0",` + rest + `}`, ""},
		{"spaced", `{ "version" : "v0" , ` + rest + ` }`, ""},
		{"escaped", `{"version":"v\u0030",` + rest + `}`, ""},
		{"other", `{"version":"V0",` + rest + `}`, renderBadVersion},
		{"number", `{"version":0,` + rest + `}`, renderBadVersion},
		{"null", `{"version":null,` + rest + `}`, renderMissingField},
		{"not UTF-8", `{"version":"v0",` + rest[:len(rest)-2] + "\xff\"}", renderInvalidJSON},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var req renderRequest
			_, err := decodeRender([]byte(tc.body), &req)
			var re *renderError
			switch {
			case tc.code == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.code != "" && (!errors.As(err, &re) || re.code != tc.code):
				t.Errorf("err %v, want %s", err, tc.code)
			}
		})
	}
}

// FuzzDecodeRender: any body decodes to a plan or to an error of this
// endpoint, never a panic; a plan is always within the bounds.
func FuzzDecodeRender(f *testing.F) {
	for _, b := range []string{
		`{"version":"v0","id":"0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","intent":"deploy","budgets":{"tokens_max":100,"time_ms":50},"risk_profile":{"level":"high"},"privacy_mode":"redact","request_id":"r"}`,
		`{"version":"v0","budgets":[]}`,
		`{"version":"v0","id":"0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","intent":"x","budgets":{"tokens_max":1e300},"request_id":"r"}`,
		`{"version":"v0","id":"0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","intent":"x","budgets":{"tokens_max":5},"request_id":"r","domains":["xroom:",3]}`,
		`{"version":"v1"}`, `nul`, ``, `[]`,
	} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req renderRequest
		p, err := decodeRender(body, &req)
		if err != nil {
			var re *renderError
			if !errors.As(err, &re) || re.status < 400 || re.status >= 500 || re.code == "" {
				t.Fatalf("error %v is not a 4xx render error", err)
			}
			return
		}
		if p.TokensMax < 1 || p.TokensMax > maxRenderTokens || p.tok == nil || p.RequestID == "" || p.Intent == "" {
			t.Fatalf("plan out of bounds: %+v", p)
		}
		if _, err := json.Marshal(p); err != nil {
			t.Fatal(err)
		}
	})
}
