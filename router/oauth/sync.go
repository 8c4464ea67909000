package oauth

import (
	"context"
	"errors"

	"github.com/hebbdb/hebb/cluster"
)

// The lookups below look again after a read barrier on the meta group
// before they refuse (cluster.Meta.Synced): a client registered, a token
// issued or an API key created through another node a moment ago, and a
// client registers on one node and sends the browser to another.

// client returns the registered client id.
func (s *Server) client(ctx context.Context, id string) (c cluster.OAuthClient, ok bool) {
	if id == "" {
		return c, false
	}
	m := s.backend.Meta()
	m.Synced(ctx, func() bool { c, ok = m.OAuthClient(id); return ok })
	return c, ok
}

// authenticate resolves an API key to its org and key ID.
func (s *Server) authenticate(ctx context.Context, key string) (org, keyID string, err error) {
	m := s.backend.Meta()
	m.Synced(ctx, func() bool {
		org, keyID, err = m.Authenticate(key)
		return !errors.Is(err, cluster.ErrInvalidKey)
	})
	return org, keyID, err
}
