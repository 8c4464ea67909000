package ratelimit

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// ClientAddr is the host of a request's peer address, the key of limits
// per client address.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Limiter counts events per key in fixed windows of one length. It keeps
// at most maxKeys keys: when full, a new key first drops the keys whose
// window has ended.
type Limiter struct {
	mu      sync.Mutex
	window  time.Duration
	maxKeys int
	now     func() time.Time
	hits    map[string]*count
}

type count struct {
	start time.Time
	n     int
}

// New returns a limiter of windows of the given length; now is the clock.
func New(window time.Duration, maxKeys int, now func() time.Time) *Limiter {
	return &Limiter{window: window, maxKeys: maxKeys, now: now, hits: map[string]*count{}}
}

// Blocked reports whether key has reached max events in its window, and
// when the window ends.
func (l *Limiter) Blocked(key string, max int) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.hits[key]
	now := l.now()
	if c == nil || now.Sub(c.start) >= l.window {
		return false, 0
	}
	return c.n >= max, c.start.Add(l.window).Sub(now)
}

// Add counts one event of key.
func (l *Limiter) Add(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	c := l.hits[key]
	if c == nil || now.Sub(c.start) >= l.window {
		if len(l.hits) >= l.maxKeys {
			l.prune(now)
		}
		c = &count{start: now}
		l.hits[key] = c
	}
	c.n++
}

// Reset forgets key (say, after a successful sign-in).
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.hits, key)
}

func (l *Limiter) prune(now time.Time) {
	for k, c := range l.hits {
		if now.Sub(c.start) >= l.window {
			delete(l.hits, k)
		}
	}
}
