package ratelimit

import (
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(time.Minute, 10, func() time.Time { return now })
	for range 3 {
		l.Add("k")
	}
	if b, wait := l.Blocked("k", 3); !b || wait != time.Minute {
		t.Fatalf("at the limit: blocked %v for %v, want true for 1m", b, wait)
	}
	if b, _ := l.Blocked("k", 4); b {
		t.Fatal("blocked under the limit")
	}
	if b, _ := l.Blocked("other", 1); b {
		t.Fatal("a key is blocked by another's events")
	}
	now = now.Add(time.Minute)
	if b, _ := l.Blocked("k", 3); b {
		t.Fatal("still blocked after the window")
	}
	l.Add("k")
	l.Reset("k")
	if b, _ := l.Blocked("k", 1); b {
		t.Fatal("blocked after reset")
	}
}

// Take checks and counts in one step: of many concurrent events, exactly
// max pass in a window.
func TestLimiterTake(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(time.Minute, 10, func() time.Time { return now })
	var passed atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if ok, _ := l.Take("k", 5); ok {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := passed.Load(); n != 5 {
		t.Fatalf("%d of 50 concurrent takes passed, want 5", n)
	}
	if ok, wait := l.Take("k", 5); ok || wait != time.Minute {
		t.Fatalf("at the limit: %v, %v", ok, wait)
	}
	now = now.Add(time.Minute)
	if ok, _ := l.Take("k", 5); !ok {
		t.Fatal("refused after the window")
	}
}

// TakeAll counts every key or none: a key at its limit refuses the whole
// take, leaving the others' counts alone; Return gives one event back.
func TestLimiterTakeAll(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(time.Minute, 10, func() time.Time { return now })
	a, b := Limit{Key: "a", Max: 3}, Limit{Key: "b", Max: 2}
	var passed atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if ok, _ := l.TakeAll(a, b); ok {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := passed.Load(); n != 2 {
		t.Fatalf("%d of 20 concurrent takes passed, want 2 (b's limit)", n)
	}
	if ok, _ := l.Take("a", 3); !ok {
		t.Fatal("a refused takes counted a beyond the two that passed")
	}
	if ok, _ := l.Take("a", 3); ok {
		t.Fatal("a passed its limit")
	}
	l.Return("b")
	if ok, _ := l.TakeAll(b); !ok {
		t.Fatal("b refused after an event was given back")
	}
	l.Return("unknown") // nothing to give back
}

// TestLimiterBoundsKeys: a flood of distinct keys does not grow the map
// past maxKeys once their windows have ended.
func TestLimiterBoundsKeys(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(time.Minute, 10, func() time.Time { return now })
	for i := range 10 {
		l.Add(fmt.Sprint("a", i))
	}
	now = now.Add(time.Minute)
	for i := range 10 {
		l.Add(fmt.Sprint("b", i))
	}
	if len(l.hits) != 10 {
		t.Fatalf("%d keys kept, want the 10 of the live window", len(l.hits))
	}
}

// TestClientAddrBehindProxies: behind a trusted proxy the client's
// address comes from X-Forwarded-For (right-most untrusted hop), so
// clients behind one proxy no longer share one bucket; from any other
// peer the header is ignored.
func TestClientAddrBehindProxies(t *testing.T) {
	p, err := ParseProxies([]string{"10.0.0.0/8", "192.0.2.7", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	TrustProxies(p)
	defer TrustProxies(nil)
	tests := []struct {
		peer string
		xff  []string
		want string
	}{
		{"203.0.113.5:40000", []string{"198.51.100.1"}, "203.0.113.5"}, // untrusted peer: header ignored
		{"10.1.2.3:40000", nil, "10.1.2.3"},
		{"10.1.2.3:40000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"10.1.2.3:40000", []string{"1.1.1.1, 198.51.100.1, 10.9.9.9"}, "198.51.100.1"}, // spoofed left entries skipped
		{"10.1.2.3:40000", []string{"1.1.1.1", "198.51.100.2"}, "198.51.100.2"},         // several headers
		{"192.0.2.7:1", []string{"198.51.100.3"}, "198.51.100.3"},
		{"[::1]:1", []string{"2001:db8::1"}, "2001:db8::/64"},
		{"[2001:db8:1:2:3:4:5:6]:1", nil, "2001:db8:1:2::/64"},              // an IPv6 client: its /64
		{"[2001:db8:1:2:ffff::9]:1", nil, "2001:db8:1:2::/64"},              // another address of the same /64
		{"[2001:db8:1:3::9]:1", nil, "2001:db8:1:3::/64"},                   // the next /64
		{"[::ffff:203.0.113.5]:1", nil, "203.0.113.5"},                      // IPv4-mapped
		{"10.1.2.3:40000", []string{"::ffff:198.51.100.4"}, "198.51.100.4"}, // forwarded, IPv4-mapped
		{"[fe80::1%eth0]:1", nil, "fe80::/64"},
		{"10.1.2.3:40000", []string{"not-an-ip"}, "10.1.2.3"},
		{"10.1.2.3:40000", []string{"10.0.0.1, 10.0.0.2"}, "10.1.2.3"}, // only proxies
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", "/oauth/register", nil)
		r.RemoteAddr = tt.peer
		for _, v := range tt.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := ClientAddr(r); got != tt.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %q, want %q", tt.peer, tt.xff, got, tt.want)
		}
	}
	if _, err := ParseProxies([]string{"10.0.0.0/33"}); err == nil {
		t.Error("a bad prefix parsed")
	}
}
