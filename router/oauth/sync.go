package oauth

import (
	"context"
	"errors"

	"github.com/hebbdb/hebb/cluster"
)

// metaSyncer is a Backend that can bring its local meta replica up to
// date with the commit index (*cluster.Cluster).
type metaSyncer interface {
	SyncMeta(ctx context.Context) error
}

// synced runs found against the local meta state and, when it reports a
// miss, once more after the replica applied every command committed
// before the call: a client, token or API key recorded through another
// node a moment ago reaches this replica with the leader's next append,
// and a client registers on one node and sends the browser to another.
func (s *Server) synced(ctx context.Context, found func(*cluster.Meta) bool) {
	if found(s.backend.Meta()) {
		return
	}
	if m, ok := s.backend.(metaSyncer); ok && m.SyncMeta(ctx) == nil {
		found(s.backend.Meta())
	}
}

// client returns the registered client id.
func (s *Server) client(ctx context.Context, id string) (c cluster.OAuthClient, ok bool) {
	if id == "" {
		return c, false
	}
	s.synced(ctx, func(m *cluster.Meta) bool { c, ok = m.OAuthClient(id); return ok })
	return c, ok
}

// authenticate resolves an API key to its org.
func (s *Server) authenticate(ctx context.Context, key string) (org string, err error) {
	s.synced(ctx, func(m *cluster.Meta) bool {
		org, _, err = m.Authenticate(key)
		return !errors.Is(err, cluster.ErrInvalidKey)
	})
	return org, err
}
