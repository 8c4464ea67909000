package ratelimit

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// trusted holds the proxies whose X-Forwarded-For is believed (TrustProxies).
var trusted atomic.Pointer[[]netip.Prefix]

// TrustProxies sets the addresses of the reverse proxies in front of the
// server: behind one, every client shares the proxy's address, so limits
// per client address (OAuth registration, console sign-in) would hold one
// bucket for all. A request from a trusted proxy is keyed by the address
// X-Forwarded-For gives, the right-most one that is not itself a trusted
// proxy. Nil trusts none.
func TrustProxies(p []netip.Prefix) { trusted.Store(&p) }

// ParseProxies parses a list of IP addresses and CIDR prefixes.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

func isTrusted(a netip.Addr) bool {
	p := trusted.Load()
	if p == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap()
	for _, pre := range *p {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the key of limits per client address: the request peer's
// address, or behind a trusted proxy the client's address the proxies
// forwarded (TrustProxies); an IPv6 address stands for its /64
// (clientKey).
func ClientAddr(r *http.Request) string {
	return ClientAddrOf(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
}

// ClientAddrOf is ClientAddr from a peer address (host:port) and the
// request's X-Forwarded-For header values, for servers other than
// net/http's.
func ClientAddrOf(remote string, forwardedFor []string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if !isTrusted(peer) {
		return clientKey(peer)
	}
	hops := strings.Split(strings.Join(forwardedFor, ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // garbage: the proxy's address is the key
		}
		if !isTrusted(a) {
			return clientKey(a)
		}
	}
	return clientKey(peer)
}

// clientKey is the limits' key of address a: an IPv4 address (an
// IPv4-mapped one unmapped) itself, an IPv6 address its /64 prefix. A host
// or a site is given a whole /64 and may pick addresses in it at will, so
// limits per IPv6 address held it to none: every request could come from
// a new address.
func clientKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
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
	l.add(key, l.now())
}

// Take counts one event of key unless key has reached max in its window
// (then it reports false and when the window ends): the check and the
// count are one step, so concurrent events cannot all pass a check made
// before any of them was counted.
func (l *Limiter) Take(key string, max int) (bool, time.Duration) {
	return l.TakeAll(Limit{Key: key, Max: max})
}

// Limit is a key and the events it may count in a window.
type Limit struct {
	Key string
	Max int
}

// TakeAll is Take of every limit in one step: it counts one event of each
// unless one of them has reached its max (then it counts none, and reports
// false and when that limit's window ends).
func (l *Limiter) TakeAll(limits ...Limit) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, lim := range limits {
		if c := l.hits[lim.Key]; c != nil && now.Sub(c.start) < l.window && c.n >= lim.Max {
			return false, c.start.Add(l.window).Sub(now)
		}
	}
	for _, lim := range limits {
		l.add(lim.Key, now)
	}
	return true, 0
}

// Return gives back one event of key that Take or TakeAll counted (the
// event turned out not to count: a sign-in that succeeded).
func (l *Limiter) Return(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.hits[key]; c != nil && c.n > 0 {
		c.n--
	}
}

func (l *Limiter) add(key string, now time.Time) {
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
