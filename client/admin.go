package client

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// AdminClient calls the operator API (/admin/v1, operator.md §3) with the
// X-Admin-Token of the server's --admin-token. It is safe for concurrent use.
type AdminClient struct {
	c *conn
}

// NewAdmin returns an admin client of the server at rootURL (e.g.
// http://127.0.0.1:8080; a trailing /api/v1 is dropped).
func NewAdmin(rootURL, adminToken string, opts ...Option) (*AdminClient, error) {
	root, err := normalizeBase(rootURL, "")
	if err != nil {
		return nil, err
	}
	root = strings.TrimSuffix(root, "/api/v1")
	c, err := newConn(root, "X-Admin-Token", adminToken, opts)
	if err != nil {
		return nil, err
	}
	return &AdminClient{c: c}, nil
}

// Org is an account.
type Org struct {
	OrgID     string    `json:"org_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// NewOrg is a created account with its first API key (shown once).
type NewOrg struct {
	OrgID  string `json:"org_id"`
	Name   string `json:"name"`
	APIKey string `json:"api_key"`
	KeyID  string `json:"key_id"`
}

// NewKey is a created API key (shown once).
type NewKey struct {
	APIKey string `json:"api_key"`
	KeyID  string `json:"key_id"`
}

type nameRequest struct {
	Name string `json:"name"`
}

// CreateOrg creates an account and its first key.
func (a *AdminClient) CreateOrg(ctx context.Context, name string) (*NewOrg, error) {
	var out NewOrg
	r := &request{method: http.MethodPost, path: "/admin/v1/orgs", body: nameRequest{Name: name}}
	if err := a.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Orgs lists every account.
func (a *AdminClient) Orgs(ctx context.Context) ([]Org, error) {
	var out struct {
		Orgs []Org `json:"orgs"`
	}
	if err := a.c.do(ctx, &request{method: http.MethodGet, path: "/admin/v1/orgs", safe: true}, &out); err != nil {
		return nil, err
	}
	return out.Orgs, nil
}

type keyRequest struct {
	Label string `json:"label,omitempty"`
}

// CreateKey adds an API key to an account.
func (a *AdminClient) CreateKey(ctx context.Context, orgID, label string) (*NewKey, error) {
	var out NewKey
	r := &request{method: http.MethodPost, path: "/admin/v1/orgs/" + seg(orgID) + "/keys", body: keyRequest{Label: label}}
	if err := a.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevokeKey revokes an API key; it then gets 401 with reason revoked_key.
func (a *AdminClient) RevokeKey(ctx context.Context, keyID string) error {
	r := &request{method: http.MethodDelete, path: "/admin/v1/keys/" + seg(keyID), safe: true}
	return a.c.do(ctx, r, nil)
}

// Plan is an account's limits; 0 means unlimited.
type Plan struct {
	DailyQueryQuota int64 `json:"daily_query_quota"`
	AtomLimit       int64 `json:"atom_limit"`
}

// OrgSettings is an account's effective settings.
type OrgSettings struct {
	HideReplaced bool `json:"hide_replaced"`
	Plan         Plan `json:"plan"`
}

// PlanUpdate changes the limits that are set.
type PlanUpdate struct {
	DailyQueryQuota *int64 `json:"daily_query_quota,omitempty"`
	AtomLimit       *int64 `json:"atom_limit,omitempty"`
}

// SettingsUpdate changes the settings that are set.
type SettingsUpdate struct {
	HideReplaced *bool       `json:"hide_replaced,omitempty"`
	Plan         *PlanUpdate `json:"plan,omitempty"`
}

// Settings reads an account's settings.
func (a *AdminClient) Settings(ctx context.Context, orgID string) (*OrgSettings, error) {
	var out OrgSettings
	r := &request{method: http.MethodGet, path: "/admin/v1/orgs/" + seg(orgID) + "/settings", safe: true}
	if err := a.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateSettings changes an account's settings and returns them.
func (a *AdminClient) UpdateSettings(ctx context.Context, orgID string, req SettingsUpdate) (*OrgSettings, error) {
	var out OrgSettings
	r := &request{method: http.MethodPatch, path: "/admin/v1/orgs/" + seg(orgID) + "/settings", body: req, safe: true}
	if err := a.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ClusterNode is one node as the cluster sees it.
type ClusterNode struct {
	NodeID     string `json:"node_id"`
	HTTPAddr   string `json:"http_addr"`
	RaftAddr   string `json:"raft_addr"`
	GossipAddr string `json:"gossip_addr"`
	Status     string `json:"status"` // alive, suspect, dead or left
}

// ClusterGroup is one data Raft group.
type ClusterGroup struct {
	GroupID      uint32   `json:"group_id"`
	LeaderNodeID *string  `json:"leader_node_id"` // nil while there is none
	Replicas     []string `json:"replicas"`
	AppliedIndex uint64   `json:"applied_index"`
}

// ClusterStatus is the answer of GET /admin/v1/cluster.
type ClusterStatus struct {
	Nodes []ClusterNode `json:"nodes"`
	Meta  struct {
		LeaderNodeID *string  `json:"leader_node_id"`
		Voters       []string `json:"voters"`
	} `json:"meta"`
	Groups []ClusterGroup `json:"groups"`
}

// Cluster reads the cluster's nodes and groups.
func (a *AdminClient) Cluster(ctx context.Context) (*ClusterStatus, error) {
	var out ClusterStatus
	if err := a.c.do(ctx, &request{method: http.MethodGet, path: "/admin/v1/cluster", safe: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Placement tells where a tenant (an org or a room) lives.
type Placement struct {
	Tenant       string   `json:"tenant"`
	GroupID      uint32   `json:"group_id"`
	LeaderNodeID *string  `json:"leader_node_id"`
	Replicas     []string `json:"replicas"`
}

// Placement looks up a tenant's group.
func (a *AdminClient) Placement(ctx context.Context, tenant string) (*Placement, error) {
	var out Placement
	r := &request{method: http.MethodGet, path: "/admin/v1/placement", query: url.Values{"tenant": {tenant}}, safe: true}
	if err := a.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RemovedNode is the answer of a node removal.
type RemovedNode struct {
	NodeID string `json:"node_id"`
	Status string `json:"status"` // "left"
}

// RemoveNode drains a node's replicas onto the others, then removes it. It
// can take minutes: only ctx bounds it, not the per-try timeout.
func (a *AdminClient) RemoveNode(ctx context.Context, nodeID string) (*RemovedNode, error) {
	var out RemovedNode
	r := &request{method: http.MethodDelete, path: "/admin/v1/cluster/nodes/" + seg(nodeID), long: true}
	if err := a.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
