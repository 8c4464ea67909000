package console

import (
	"sync"
	"time"
)

// Sign-in rate limits: failures allowed per window, per e-mail address and
// per client address. Counts live on each node.
const (
	limitWindow     = 15 * time.Minute
	maxEmailFails   = 5
	maxAddressFails = 30
	maxSignUps      = 10 // per client address and window
	limiterMaxKeys  = 100_000
)

type window struct {
	start time.Time
	n     int
}

// limiter counts events per key in fixed windows.
type limiter struct {
	mu   sync.Mutex
	now  func() time.Time
	hits map[string]*window
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, hits: map[string]*window{}}
}

// blocked reports whether key has reached max events in its window, and
// when the window ends.
func (l *limiter) blocked(key string, max int) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.hits[key]
	now := l.now()
	if w == nil || now.Sub(w.start) >= limitWindow {
		return false, 0
	}
	return w.n >= max, w.start.Add(limitWindow).Sub(now)
}

// add counts one event of key.
func (l *limiter) add(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	w := l.hits[key]
	if w == nil || now.Sub(w.start) >= limitWindow {
		if len(l.hits) >= limiterMaxKeys {
			l.prune(now)
		}
		w = &window{start: now}
		l.hits[key] = w
	}
	w.n++
}

// reset forgets key (a successful sign-in).
func (l *limiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.hits, key)
}

func (l *limiter) prune(now time.Time) {
	for k, w := range l.hits {
		if now.Sub(w.start) >= limitWindow {
			delete(l.hits, k)
		}
	}
}
