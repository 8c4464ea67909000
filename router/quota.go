package router

import (
	"strconv"
	"sync"
	"time"
)

// quotas counts each account's queries per UTC day (operator.md §6, §8).
// The count lives on this node: exact for a single node; a cluster-wide
// count through the meta group is part of the cluster work.
type quotas struct {
	mu   sync.Mutex
	day  string
	used map[string]int64
}

func newQuotas() *quotas { return &quotas{used: make(map[string]int64)} }

func utcDay(t time.Time) string { return t.UTC().Format("2006-01-02") }

func (q *quotas) roll(now time.Time) {
	if d := utcDay(now); d != q.day {
		q.day, q.used = d, make(map[string]int64)
	}
}

// exhausted reports whether org has no query left today.
func (q *quotas) exhausted(org string, limit int64) bool {
	if limit <= 0 {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.roll(time.Now())
	return q.used[org] >= limit
}

func (q *quotas) count(org string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.roll(time.Now())
	q.used[org]++
}

// usedToday is the org's count of queries today.
func (q *quotas) usedToday(org string) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.roll(time.Now())
	return q.used[org]
}

func secondsToMidnight(now time.Time) int {
	now = now.UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return int(next.Sub(now).Seconds()) + 1
}

// counted wraps a query endpoint: refused with 429 once the daily quota is
// spent, counted when it answers below 400.
func (s *Server) counted(h func(*call) error) func(*call) error {
	return func(c *call) error {
		limit := c.settings.Plan.DailyQueryQuota
		if s.quota.exhausted(c.org, limit) {
			e := newError(429, codeRateLimited, "Daily query quota exhausted").with("reason", "daily_query_quota").
				with("limit", limit)
			e.Retryable = true
			e.Header = map[string]string{"Retry-After": strconv.Itoa(secondsToMidnight(time.Now()))}
			return e
		}
		if err := h(c); err != nil {
			return err
		}
		if c.ctx.Response.StatusCode() < 400 {
			s.quota.count(c.org)
		}
		return nil
	}
}

// checkAtomLimit refuses a write that would take the account past its
// atom limit (total_atoms, every revision, secrets excluded).
func (s *Server) checkAtomLimit(c *call, tenant string, adding int) error {
	limit := c.settings.Plan.AtomLimit
	if limit <= 0 || tenant != c.org {
		return nil
	}
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if err != nil {
		return err
	}
	if int64(fsm.AtomCount(c.org)+adding) > limit {
		return newError(429, codeRateLimited, "Atom limit of the plan reached").with("reason", "atom_limit").
			with("limit", limit)
	}
	return nil
}
