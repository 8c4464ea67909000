package router

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/hebbdb/hebb/cluster"
)

// apiKey reads the caller's key: X-Api-Key, else Authorization: Bearer.
// A present Authorization header of another scheme is malformed.
func apiKey(c *call) (string, *apiError) {
	if k := bytes.TrimSpace(c.ctx.Request.Header.Peek("X-Api-Key")); len(k) > 0 {
		return string(k), nil
	}
	auth := strings.TrimSpace(string(c.ctx.Request.Header.Peek("Authorization")))
	if auth == "" {
		return "", nil
	}
	scheme, key, _ := strings.Cut(auth, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return auth, nil // checked whole, so refused as malformed (or placeholder)
	}
	return strings.TrimSpace(key), nil
}

var authMessages = map[string]string{
	cluster.ReasonMissingKey:     "API key required: send it in the X-Api-Key header",
	cluster.ReasonPlaceholderKey: "API key is a placeholder: replace it with a key from the console",
	cluster.ReasonMalformedKey:   "API key is malformed: keys begin with mk_live_",
	cluster.ReasonInvalidKey:     "API key is not valid",
	cluster.ReasonRevokedKey:     "API key has been revoked",
}

// authenticate resolves the caller's org, or returns the 401 of §7.1.
func (s *Server) authenticate(c *call) error {
	if org, ok := inProcessOrg(c.ctx); ok { // the tool connector, already authenticated
		c.org, c.settings = org, s.backend.Meta().Settings(org, s.cfg.DefaultPlan)
		return nil
	}
	key, _ := apiKey(c)
	var org, keyID string
	var err error
	// A key created through another node a moment ago reaches this
	// replica with the leader's next append: look again before refusing.
	meta := s.backend.Meta()
	meta.Synced(c.std, func() bool { org, keyID, err = meta.Authenticate(key); return !unknownKey(err) })
	if err != nil {
		reason := cluster.ReasonInvalidKey
		var ae *cluster.AuthError
		if errors.As(err, &ae) {
			reason = ae.Reason
		}
		if reason == cluster.ReasonMissingKey && (bodyNamesRoom(c.ctx.PostBody()) || strings.HasPrefix(c.param("domain"), roomPrefix)) {
			return s.unauthorized(reason, "Caller org not identified")
		}
		return s.unauthorized(reason, authMessages[reason])
	}
	c.org = org
	c.settings = s.backend.Meta().Settings(org, s.cfg.DefaultPlan)
	s.noteKeyUse(keyID)
	return nil
}

// unknownKey reports whether err refuses a well-formed key the local meta
// replica does not know.
func unknownKey(err error) bool {
	var ae *cluster.AuthError
	return errors.As(err, &ae) && ae.Reason == cluster.ReasonInvalidKey
}

// syncMeta waits for the local meta replica to apply what was committed
// before the call (cluster.Meta.Sync); a failed wait leaves the reader with
// the local state.
func (s *Server) syncMeta(c *call) { _ = s.backend.Meta().Sync(c.std) }

func (s *Server) unauthorized(reason, msg string) *apiError {
	e := newError(401, codeUnauthorized, msg).with("reason", reason).with("keys_url", s.keysURL())
	e.Header = map[string]string{"WWW-Authenticate": `Bearer realm="hebb"`}
	return e
}

func (s *Server) keysURL() string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/console/keys"
}

type domainProbe struct {
	Domain  *string   `json:"domain"`
	Domains []*string `json:"domains"` // query
	Items   []struct {
		Domain *string `json:"domain"`
	} `json:"items"`
	Queries []struct { // read-batch
		Domain *string `json:"domain"`
	} `json:"queries"`
}

// bodyNamesRoom tells whether an unauthenticated request addresses a room,
// which answers 401 "Caller org not identified" (operator.md §8).
func bodyNamesRoom(body []byte) bool {
	if len(body) == 0 || !bytes.Contains(body, []byte(roomPrefix)) {
		return false
	}
	var p domainProbe
	if lenientJSON.Unmarshal(body, &p) != nil {
		return false
	}
	room := func(d *string) bool { return d != nil && strings.HasPrefix(*d, roomPrefix) }
	if room(p.Domain) || slices.ContainsFunc(p.Domains, room) {
		return true
	}
	for _, it := range p.Items {
		if room(it.Domain) {
			return true
		}
	}
	for _, q := range p.Queries {
		if room(q.Domain) {
			return true
		}
	}
	return false
}
