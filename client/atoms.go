package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Atom types.
const (
	AtomEpisode   = "episode"
	AtomPrototype = "prototype"
	AtomSingleton = "singleton"
	AtomSecret    = "secret" // a vault secret's row, seen in export only
)

// Atom is the full atom envelope of the lookups and of export lines.
type Atom struct {
	AtomID      string          `json:"atom_id"`
	Content     string          `json:"content"`
	Concepts    []string        `json:"concepts"`
	Domain      string          `json:"domain"`
	Metadata    json.RawMessage `json:"metadata"`
	Fingerprint *string         `json:"fingerprint"`
	ExternalRef *string         `json:"external_ref"`
	Importance  float64         `json:"importance"`
	Valence     float64         `json:"valence"`
	AtomType    string          `json:"atom_type"`
	Supersedes  []string        `json:"supersedes"`
	// SupersededBy is nil while the atom is the live tip.
	SupersededBy   *string     `json:"superseded_by"`
	CreatedAt      time.Time   `json:"created_at"`
	AccessCount    int64       `json:"access_count"`
	LastAccessedAt *time.Time  `json:"last_accessed_at"`
	Provenance     *Provenance `json:"provenance,omitempty"`
}

// Atom fetches one atom of the caller's account by ID, superseded or not
// (GET /memory/atoms/{id}); ErrNotFound when absent.
func (c *Client) Atom(ctx context.Context, atomID string) (*Atom, error) {
	var out Atom
	if err := c.get(ctx, "/memory/atoms/"+seg(atomID), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

type byRefRequest struct {
	ExternalRef string `json:"external_ref"`
}

// AtomByExternalRef fetches the atom written with externalRef.
func (c *Client) AtomByExternalRef(ctx context.Context, externalRef string) (*Atom, error) {
	var out Atom
	if err := c.post(ctx, "/memory/atoms/by-external-ref", byRefRequest{ExternalRef: externalRef}, true, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChainRevision is one revision of a supersession chain.
type ChainRevision struct {
	ID           string    `json:"id"`
	Content      string    `json:"content"`
	Domain       string    `json:"domain"`
	Concepts     []string  `json:"concepts"`
	CreatedAt    time.Time `json:"created_at"`
	IsHead       bool      `json:"is_head"`
	Supersedes   []string  `json:"supersedes,omitempty"`
	SupersededBy *string   `json:"superseded_by,omitempty"`
}

// Chain is the answer of GET /memory/atoms/{id}/chain.
type Chain struct {
	AtomID string `json:"atom_id"`
	// Revisions are in topological order: a predecessor never follows its
	// successor. Find the head with Head, not by position.
	Revisions []ChainRevision `json:"revisions"`
	Dangling  []string        `json:"dangling"`
	// Truncated: the walk spent its budget; call again from an edge revision.
	Truncated bool `json:"truncated"`
}

// Head returns the live tip, or nil when the chain has none.
func (ch *Chain) Head() *ChainRevision {
	for i := range ch.Revisions {
		if ch.Revisions[i].IsHead {
			return &ch.Revisions[i]
		}
	}
	return nil
}

// Chain walks every revision linked to atomID by supersession.
func (c *Client) Chain(ctx context.Context, atomID string) (*Chain, error) {
	var out Chain
	if err := c.get(ctx, "/memory/atoms/"+seg(atomID)+"/chain", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteAtomResult is the answer of DELETE /memory/atoms/{id}.
type DeleteAtomResult struct {
	Deleted                          int      `json:"deleted"` // 0 when already gone
	AtomID                           string   `json:"atom_id"`
	SupersededPredecessorsLeftHidden []string `json:"superseded_predecessors_left_hidden"`
	HistoryDestroyed                 bool     `json:"history_destroyed"`
}

// DeleteAtom permanently deletes one atom of the caller's account. It is
// idempotent, so it is retried like a read; but when a first try deleted
// the atom and its answer was lost, the retry's answer is the already-gone
// one (Deleted 0, no predecessors left hidden, HistoryDestroyed false):
// what the deletion did is then not known. Check the chain first when it
// matters.
func (c *Client) DeleteAtom(ctx context.Context, atomID string) (*DeleteAtomResult, error) {
	var out DeleteAtomResult
	r := &request{method: http.MethodDelete, path: "/memory/atoms/" + seg(atomID), safe: true}
	if err := c.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteDomainResult is the answer of DELETE /memory/domain/{domain}.
type DeleteDomainResult struct {
	Deleted                               int    `json:"deleted"`
	Domain                                string `json:"domain"`
	SkippedSecrets                        int    `json:"skipped_secrets"`
	OrphanEdgesRemoved                    int    `json:"orphan_edges_removed"` // deprecated, always 0
	SupersededPredecessorsLeftHiddenCount int    `json:"superseded_predecessors_left_hidden_count"`
	HistoryDestroyed                      bool   `json:"history_destroyed"`
}

// DeleteDomain permanently wipes a private domain (secrets are skipped).
func (c *Client) DeleteDomain(ctx context.Context, domain string) (*DeleteDomainResult, error) {
	var out DeleteDomainResult
	if err := c.send(ctx, http.MethodDelete, "/memory/domain/"+seg(domain), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Stats is the answer of GET /memory/stats (the caller's own account).
type Stats struct {
	TotalAtoms           int      `json:"total_atoms"`
	Episodes             int      `json:"episodes"`
	Prototypes           int      `json:"prototypes"`
	Singletons           int      `json:"singletons"`
	HebbianEdges         int      `json:"hebbian_edges"`
	EpisodicFingerprints int      `json:"episodic_fingerprints"`
	Domains              []string `json:"domains"`
	AvgValence           float64  `json:"avg_valence"`
	AvgImportance        float64  `json:"avg_importance"`
}

// Stats reads the account's statistics.
func (c *Client) Stats(ctx context.Context) (*Stats, error) {
	var out Stats
	if err := c.get(ctx, "/memory/stats", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Domains lists the account's active domains.
func (c *Client) Domains(ctx context.Context) ([]string, error) {
	var out struct {
		Domains []string `json:"domains"`
	}
	if err := c.get(ctx, "/memory/domains", &out); err != nil {
		return nil, err
	}
	return out.Domains, nil
}

// Reset truncates every tenant's atoms (DELETE /memory/reset); the server
// refuses with 403 unless started with --enable-reset.
func (c *Client) Reset(ctx context.Context) error {
	return c.send(ctx, http.MethodDelete, "/memory/reset", nil, nil)
}
