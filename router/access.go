package router

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

// touchInterval is how often access counts are flushed (DESIGN.md §4).
const touchInterval = 100 * time.Millisecond

// toucher batches the access counts of returned atoms into one Touch
// command per tenant per interval, so reads never cost a Raft entry each.
type toucher struct {
	backend Backend
	log     *slog.Logger
	mu      sync.Mutex
	pending map[string][]raftfsm.ID
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

func newToucher(b Backend, log *slog.Logger) *toucher {
	return &toucher{backend: b, log: log, pending: make(map[string][]raftfsm.ID),
		done: make(chan struct{}), stopped: make(chan struct{})}
}

func (t *toucher) add(tenant string, ids []raftfsm.ID) {
	if len(ids) == 0 {
		return
	}
	t.mu.Lock()
	t.pending[tenant] = append(t.pending[tenant], ids...)
	t.mu.Unlock()
}

func (t *toucher) run() {
	defer close(t.stopped)
	tick := time.NewTicker(touchInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			t.flush()
		case <-t.done:
			t.flush()
			return
		}
	}
}

func (t *toucher) flush() {
	t.mu.Lock()
	batch := t.pending
	t.pending = make(map[string][]raftfsm.ID)
	t.mu.Unlock()
	tenants := make([]string, 0, len(batch))
	for k := range batch {
		tenants = append(tenants, k)
	}
	sort.Strings(tenants)
	now := time.Now().UnixMicro()
	for _, tenant := range tenants {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cmd := raftfsm.TouchCmd{Tenant: tenant, IDs: batch[tenant], At: now}
		if _, err := t.backend.Propose(ctx, tenant, cmd.Encode()); err != nil {
			t.log.Warn("cannot record access counts", "err", err, "atoms", len(cmd.IDs))
		}
		cancel()
	}
}

// stop flushes what is pending; safe to call when run never started.
func (t *toucher) stop() {
	t.once.Do(func() { close(t.done) })
	select {
	case <-t.stopped:
	case <-time.After(6 * time.Second):
	}
}
