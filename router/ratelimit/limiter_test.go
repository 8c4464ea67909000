package ratelimit

import (
	"fmt"
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
