package router

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	frouter "github.com/fasthttp/router"

	"github.com/hebbdb/hebb/cluster"
)

func (s *Server) adminRoutes(r *frouter.Router) {
	a := r.Group("/admin/v1")
	a.POST("/orgs", s.admin(s.adminCreateOrg))
	a.GET("/orgs", s.admin(s.adminListOrgs))
	a.POST("/orgs/{org_id}/keys", s.admin(s.adminCreateKey))
	a.DELETE("/keys/{key_id}", s.admin(s.adminRevokeKey))
	a.GET("/orgs/{org_id}/settings", s.admin(s.adminGetSettings))
	a.PATCH("/orgs/{org_id}/settings", s.admin(s.adminPatchSettings))
	a.GET("/cluster", s.admin(s.adminCluster))
	a.GET("/placement", s.admin(s.adminPlacement))
	a.DELETE("/cluster/nodes/{node_id}", s.admin(s.adminRemoveNode))
}

// admin wraps an operator route: off without --admin-token, 401 on a wrong
// or missing X-Admin-Token.
func (s *Server) admin(h func(*call) error) func(ctx *fastCtx) {
	return s.plain(func(c *call) error {
		if s.cfg.AdminToken == "" {
			return notFound("Not found")
		}
		got := c.ctx.Request.Header.Peek("X-Admin-Token")
		if subtle.ConstantTimeCompare(got, []byte(s.cfg.AdminToken)) != 1 {
			return newError(401, codeUnauthorized, "Admin token missing or wrong").with("reason", "invalid_admin_token")
		}
		return h(c)
	})
}

type createOrgRequest struct {
	Name *string `json:"name"`
}

func (s *Server) adminCreateOrg(c *call) error {
	var req createOrgRequest
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	v := &validator{}
	if req.Name == nil {
		v.add("missing", "Field required", "name")
	} else {
		v.name(strings.TrimSpace(*req.Name), 1, 200, "name")
	}
	if err := v.err(); err != nil {
		return err
	}
	org, raw, key, err := CreateOrg(c.std, s.backend, strings.TrimSpace(*req.Name), "")
	if err != nil {
		return err
	}
	return s.ok(c, map[string]string{"org_id": org.ID, "name": org.Name, "api_key": raw, "key_id": key.KeyID})
}

// CreateOrg makes an org with one key (rawKey, or a generated one) through
// the meta group. It is also how the server bootstraps its first org.
func CreateOrg(ctx stdContext, b Backend, name, rawKey string) (cluster.Org, string, cluster.NewKey, error) {
	var err error
	if rawKey == "" {
		if rawKey, err = cluster.GenerateKey(); err != nil {
			return cluster.Org{}, "", cluster.NewKey{}, fmt.Errorf("cannot generate key: %w", err)
		}
	}
	now := time.Now().UTC()
	id := cluster.NewOrgID()
	key, err := cluster.NewKeyRecord(rawKey, id, "default", now)
	if err != nil {
		return cluster.Org{}, "", cluster.NewKey{}, fmt.Errorf("cannot make key record: %w", err)
	}
	out, err := b.ProposeMeta(ctx, cluster.EncodeCreateOrg(cluster.CreateOrg{OrgID: id, Name: name, CreatedAt: now, Key: &key}))
	if err != nil {
		return cluster.Org{}, "", cluster.NewKey{}, err
	}
	if e, ok := out.(error); ok {
		return cluster.Org{}, "", cluster.NewKey{}, fmt.Errorf("cannot create org: %w", e)
	}
	org, _ := out.(cluster.Org)
	return org, rawKey, key, nil
}

func (s *Server) adminListOrgs(c *call) error {
	s.syncMeta(c) // the orgs created through any node
	orgs := s.backend.Meta().Orgs()
	out := make([]map[string]string, len(orgs))
	for i, o := range orgs {
		out[i] = map[string]string{"org_id": o.ID, "name": o.Name, "created_at": o.CreatedAt.UTC().Format(timeFormat)}
	}
	return s.ok(c, map[string]any{"orgs": out})
}

// maxKeyLabel is the longest key label, in characters (as the console's).
const maxKeyLabel = 100

type createKeyRequest struct {
	Label *string `json:"label"`
}

func (s *Server) adminCreateKey(c *call) error {
	orgID := c.param("org_id")
	var req createKeyRequest
	body := c.ctx.PostBody()
	if len(body) > 0 {
		if err := decodeBody(body, &req, true); err != nil {
			return err
		}
	}
	if req.Label != nil {
		v := &validator{}
		if v.name(*req.Label, 0, maxKeyLabel, "label"); v.err() != nil {
			return v.err()
		}
	}
	if !s.orgExists(c, orgID) {
		return notFound("Org not found")
	}
	raw, err := cluster.GenerateKey()
	if err != nil {
		return fmt.Errorf("cannot generate key: %w", err)
	}
	label := ""
	if req.Label != nil {
		label = *req.Label
	}
	key, err := cluster.NewKeyRecord(raw, orgID, label, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("cannot make key record: %w", err)
	}
	if err := s.metaResult(c, cluster.EncodeCreateKey(cluster.CreateKey{NewKey: key})); err != nil {
		return err
	}
	return s.ok(c, map[string]string{"api_key": raw, "key_id": key.KeyID})
}

func (s *Server) adminRevokeKey(c *call) error {
	keyID := c.param("key_id")
	meta := s.backend.Meta()
	var ok bool
	meta.Synced(c.std, func() bool { _, ok = meta.Key(keyID); return ok })
	if !ok {
		return notFound("Key not found")
	}
	if err := s.metaResult(c, cluster.EncodeRevokeKey(cluster.RevokeKey{KeyID: keyID, At: time.Now().UTC()})); err != nil {
		return err
	}
	return s.ok(c, map[string]any{"key_id": keyID, "revoked": true})
}

// metaResult proposes a meta command and maps its error result.
func (s *Server) metaResult(c *call, cmd []byte) error {
	out, err := s.backend.ProposeMeta(c.std, cmd)
	if err != nil {
		return err
	}
	if e, ok := out.(error); ok {
		switch {
		case errors.Is(e, cluster.ErrUnknownOrg):
			return notFound("Org not found")
		case errors.Is(e, cluster.ErrUnknownKey):
			return notFound("Key not found")
		case errors.Is(e, cluster.ErrInvalidCommand):
			return validationError(fieldErr("value_error", e.Error()))
		}
		return e
	}
	return nil
}

func (s *Server) adminGetSettings(c *call) error {
	orgID := c.param("org_id")
	s.syncMeta(c) // the settings as last written, through any node
	if _, ok := s.backend.Meta().Org(orgID); !ok {
		return notFound("Org not found")
	}
	return s.ok(c, s.backend.Meta().Settings(orgID, s.cfg.DefaultPlan))
}

type planPatch struct {
	DailyQueryQuota *int64 `json:"daily_query_quota"`
	AtomLimit       *int64 `json:"atom_limit"`
}

type settingsPatch struct {
	HideReplaced *bool      `json:"hide_replaced"`
	Plan         *planPatch `json:"plan"`
}

func (s *Server) adminPatchSettings(c *call) error {
	orgID := c.param("org_id")
	var req settingsPatch
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	if !s.orgExists(c, orgID) {
		return notFound("Org not found")
	}
	cmd := cluster.UpdateSettings{OrgID: orgID, HideReplaced: req.HideReplaced}
	v := &validator{}
	if req.Plan != nil {
		cmd.DailyQueryQuota, cmd.AtomLimit = req.Plan.DailyQueryQuota, req.Plan.AtomLimit
		if p := cmd.DailyQueryQuota; p != nil && *p < 0 {
			v.add("greater_than_equal", "Input should be greater than or equal to 0", "plan", "daily_query_quota")
		}
		if p := cmd.AtomLimit; p != nil && *p < 0 {
			v.add("greater_than_equal", "Input should be greater than or equal to 0", "plan", "atom_limit")
		}
	}
	if err := v.err(); err != nil {
		return err
	}
	if err := s.metaResult(c, cluster.EncodeUpdateSettings(cmd)); err != nil {
		return err
	}
	return s.ok(c, s.backend.Meta().Settings(orgID, s.cfg.DefaultPlan))
}

func (s *Server) adminCluster(c *call) error {
	return s.ok(c, s.backend.Status().Admin)
}

func (s *Server) adminPlacement(c *call) error {
	tenant := string(c.ctx.QueryArgs().Peek("tenant"))
	if tenant == "" {
		return validationError(fieldError{Loc: []any{"query", "tenant"}, Msg: "Field required", Type: "missing"})
	}
	return s.ok(c, s.backend.Placement(tenant))
}

// Drainer is implemented by a Backend that can move a node's replicas away.
type Drainer interface {
	Drain(ctx stdContext, nodeID string) error
}

// drainTimeout bounds DELETE /admin/v1/cluster/nodes/{id}.
const drainTimeout = 5 * time.Minute

func (s *Server) adminRemoveNode(c *call) error {
	id := c.param("node_id")
	d, ok := s.backend.(Drainer)
	if !ok {
		return newError(501, codeInternal, "This node cannot drain nodes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	if err := d.Drain(ctx, id); err != nil {
		switch {
		case errors.Is(err, cluster.ErrUnknownNode):
			return notFound("Node not found")
		case errors.Is(err, cluster.ErrInvalidCommand):
			msg := strings.TrimPrefix(err.Error(), cluster.ErrInvalidCommand.Error()+": ") // the reason, not the sentinel
			return validationError(fieldError{Loc: []any{"path", "node_id"}, Msg: msg, Type: "value_error"})
		}
		return err
	}
	return s.ok(c, map[string]string{"node_id": id, "status": cluster.NodeLeft})
}

// orgExists reports whether orgID names an org, looking again after a meta
// read barrier before it says no: created through another node a moment
// ago (an operator's script behind a load balancer).
func (s *Server) orgExists(c *call, orgID string) (ok bool) {
	meta := s.backend.Meta()
	meta.Synced(c.std, func() bool { _, ok = meta.Org(orgID); return ok })
	return ok
}
