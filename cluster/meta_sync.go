package cluster

import "context"

// SetSync installs the read barrier Synced waits for: the cluster's
// SyncMeta. A Meta without one (tests, tools) looks once.
func (m *Meta) SetSync(sync func(context.Context) error) { m.sync.Store(&sync) }

// Synced runs found against the local state and, when it reports a miss,
// once more after the local replica applied every command committed before
// the call. What another node recorded a moment ago (a session, a client,
// a token, a user) reaches this replica with the leader's next append, and
// a browser or client behind a load balancer goes on to another node at
// once; a lookup that would refuse must look again first.
func (m *Meta) Synced(ctx context.Context, found func() bool) {
	if found() {
		return
	}
	if m.sync.Load() != nil && m.Sync(ctx) == nil {
		found()
	}
}

// Sync returns once the local replica applied every command committed
// before the call (the barrier SetSync installed; nil without one).
func (m *Meta) Sync(ctx context.Context) error {
	if f := m.sync.Load(); f != nil {
		return (*f)(ctx)
	}
	return nil
}
