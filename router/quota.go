package router

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/raftfsm"
)

// quotas counts each account's queries per UTC day (operator.md §6, §8).
// Counts are kept here until flushed (every second) into the meta group,
// which sums what every node counted: the limit is checked against the
// cluster-wide count plus what this node has not flushed yet.
type quotas struct {
	meta     *cluster.Meta
	propose  func(ctx context.Context, cmd []byte) (any, error)
	log      *slog.Logger
	mu       sync.Mutex
	day      string
	pending  map[string]int64 // counted, not yet proposed
	inflight map[string]int64 // proposed, not yet acknowledged
	held     map[string]int64 // queries under way, each holding its slot (take)
	done     chan struct{}
	stopped  chan struct{}
	once     sync.Once
}

// usageFlushInterval is how often counted queries reach the meta group.
const usageFlushInterval = time.Second

func (q *quotas) run() {
	defer close(q.stopped)
	tick := time.NewTicker(usageFlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			q.flush()
		case <-q.done:
			q.flush()
			return
		}
	}
}

func (q *quotas) stop() {
	q.once.Do(func() { close(q.done) })
	<-q.stopped
}

func newQuotas(b Backend, log *slog.Logger) *quotas {
	q := &quotas{meta: b.Meta(), propose: b.ProposeMeta, log: log,
		pending: make(map[string]int64), inflight: make(map[string]int64),
		held: make(map[string]int64), done: make(chan struct{}), stopped: make(chan struct{})}
	go q.run()
	return q
}

func utcDay(t time.Time) string { return t.UTC().Format("2006-01-02") }

func (q *quotas) roll(now time.Time) {
	if d := utcDay(now); d != q.day {
		q.day, q.pending, q.inflight = d, make(map[string]int64), make(map[string]int64)
		q.held = make(map[string]int64)
	}
}

// used is org's count today: recorded cluster-wide, local unflushed, and
// the queries under way.
func (q *quotas) used(org string) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.roll(time.Now())
	return q.usedLocked(org)
}

func (q *quotas) usedLocked(org string) int64 {
	return q.meta.Usage(org, q.day) + q.pending[org] + q.inflight[org] + q.held[org]
}

// take holds one of org's queries for a request about to run: false when
// none is left today (limit 0: unlimited). The check and the hold are one
// step, so concurrent requests cannot all pass a check made before any of
// them was counted. The caller gives the slot back with settle.
func (q *quotas) take(org string, limit int64) (day string, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.roll(time.Now())
	if limit > 0 && q.usedLocked(org) >= limit {
		return "", false
	}
	q.held[org]++
	return q.day, true
}

// settle ends a query take held on day: counted when it answered below
// 400, given back otherwise.
func (q *quotas) settle(org, day string, answered bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.roll(time.Now())
	if q.day == day {
		q.held[org]--
		if q.held[org] == 0 {
			delete(q.held, org)
		}
	}
	if answered {
		q.pending[org]++
	}
}

// flush proposes the pending counts to the meta group.
func (q *quotas) flush() {
	q.mu.Lock()
	if len(q.pending) == 0 {
		q.mu.Unlock()
		return
	}
	day, batch := q.day, q.pending
	q.pending = make(map[string]int64)
	for org, n := range batch {
		q.inflight[org] += n
	}
	q.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := q.propose(ctx, cluster.EncodeAddUsage(cluster.AddUsage{Day: day, Counts: batch}))
	cancel()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.day != day {
		return
	}
	for org, n := range batch {
		q.inflight[org] -= n
		if err != nil {
			q.pending[org] += n
		}
	}
	if err != nil {
		q.log.Warn("cannot record query usage", "err", err)
	}
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
		day, ok := s.quota.take(c.org, limit)
		if !ok {
			return retryLater("daily_query_quota", "Daily query quota exhausted", limit, secondsToMidnight(time.Now()))
		}
		err := h(c)
		s.quota.settle(c.org, day, err == nil && c.ctx.Response.StatusCode() < 400)
		return err
	}
}

// checkAtomLimit refuses early a batch whose items would take the account
// past its atom limit (total_atoms, every revision, secrets excluded); an
// item whose external_ref is taken stores nothing and is not counted. The
// exact check runs again in apply (WriteCmd.Limit), so concurrent writes
// through any node cannot pass the limit; a node without a replica of the
// org's group leaves it to apply (a batch forwarded to a room's group may
// carry private items too). A single write is left to apply: at the limit
// it still answers a taken external_ref or a duplicate the gate refuses
// with 200, as below it.
func (s *Server) checkAtomLimit(c *call, tenant string, items []*raftfsm.WriteItem) error {
	limit := c.settings.Plan.AtomLimit
	if limit <= 0 || tenant != c.org {
		return nil
	}
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if _, elsewhere := notHosted(err); elsewhere {
		return nil
	}
	if err != nil {
		return err
	}
	if int64(fsm.AtomCountAfter(c.org, items)) > limit {
		return atomLimitError(limit)
	}
	return nil
}

// retryLater is a retryable 429 RATE_LIMITED with its reason, the limit
// reached and Retry-After, counted in hebb_quota_rejections_total.
func retryLater(reason, msg string, limit int64, afterSeconds int) *apiError {
	quotaRejections.WithLabelValues(reason).Inc()
	e := newError(429, codeRateLimited, msg).with("reason", reason).with("limit", limit)
	e.Retryable = true
	e.Header = map[string]string{"Retry-After": strconv.Itoa(afterSeconds)}
	return e
}

func atomLimitError(limit int64) *apiError {
	quotaRejections.WithLabelValues("atom_limit").Inc()
	e := newError(429, codeRateLimited, "Atom limit of the plan reached").with("reason", "atom_limit")
	if limit > 0 {
		e.with("limit", limit)
	}
	return e
}
