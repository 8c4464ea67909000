package router

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hebbdb/hebb/raftfsm"
)

// Vault limits (operator.md §5).
const (
	maxAlias       = 200
	maxSecretValue = 65536
	secretDomain   = defaultDomain
)

type secretRequest struct {
	Alias   *string `json:"alias"`
	Value   *string `json:"value"`
	Context *string `json:"context"`
}

type secretJSON struct {
	AtomID    string `json:"atom_id"`
	Alias     string `json:"alias"`
	Context   string `json:"context"`
	CreatedAt string `json:"created_at"`
}

func renderSecret(a *raftfsm.Atom) secretJSON {
	return secretJSON{AtomID: a.ID.String(), Alias: strings.TrimPrefix(a.ExternalRef, secretRefPref),
		Context: a.Content, CreatedAt: formatMicros(a.CreatedAt)}
}

func validAlias(a string) bool {
	if a == "" || len(a) > maxAlias {
		return false
	}
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:", r)) {
			return false
		}
	}
	return true
}

// storeSecret seals the value here, before the command is proposed, so no
// Raft entry holds it in clear. Storing an alias again keeps its atom ID.
func (s *Server) storeSecret(c *call) error {
	var req secretRequest
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	v := &validator{}
	if req.Alias == nil {
		v.add("missing", "Field required", "alias")
	} else if !validAlias(*req.Alias) {
		v.add("string_pattern_mismatch", "alias must be 1 to 200 characters of letters, digits, _ - . :", "alias")
	}
	if req.Value == nil {
		v.add("missing", "Field required", "value")
	} else {
		v.strLen(*req.Value, 1, maxSecretValue, "value")
	}
	context := ""
	if req.Context != nil {
		v.strLen(*req.Context, 0, maxContent, "context")
		context = *req.Context
	}
	if err := v.err(); err != nil {
		return err
	}
	if s.cfg.Vault == nil {
		return unavailable("Vault is not configured on this node").with("reason", "vault_unavailable")
	}
	ref := secretRefPref + *req.Alias
	id, err := s.secretID(c, ref)
	if err != nil {
		return err
	}
	for attempt := 0; attempt < 3; attempt++ {
		sealed, err := s.cfg.Vault.Seal([]byte(*req.Value), c.org, *req.Alias, id.String())
		if err != nil {
			return fmt.Errorf("cannot seal secret: %w", err)
		}
		// A new value without a context keeps the purpose stored with the
		// alias: apply decides, against the alias as it is then.
		item := raftfsm.WriteItem{ID: id, CreatedAt: time.Now().UnixMicro(), Content: context, Domain: secretDomain,
			ExternalRef: ref, Type: raftfsm.Secret, Sealed: sealed, KeepContent: req.Context == nil}
		res, err := s.proposeWrite(c, &raftfsm.WriteCmd{Tenant: c.org, Items: []raftfsm.WriteItem{item}})
		if err != nil {
			return err
		}
		if r := res.Results[0]; r.Reason == raftfsm.ReasonSecretIDMismatch {
			id = r.AtomID
			continue
		}
		fsm, err := s.backend.ReadFSM(c.std, c.org)
		if err != nil {
			return err
		}
		a, ok := fsm.Secret(c.org, ref)
		if !ok {
			return fmt.Errorf("secret %s vanished after store", *req.Alias)
		}
		out := renderSecret(&a)
		if req.Context != nil {
			// What this save stored, even if another one stored since.
			out.Context = *req.Context
		}
		return s.ok(c, out)
	}
	return conflict("The secret was changed concurrently; retry")
}

// secretID is the atom ID of an existing alias, or a fresh UUIDv7.
func (s *Server) secretID(c *call, ref string) (raftfsm.ID, error) {
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if err != nil {
		return raftfsm.ID{}, err
	}
	if a, ok := fsm.Secret(c.org, ref); ok {
		return a.ID, nil
	}
	u, err := uuid.NewV7()
	if err != nil {
		return raftfsm.ID{}, fmt.Errorf("cannot make atom ID: %w", err)
	}
	return raftfsm.ID(u), nil
}

func (s *Server) listSecrets(c *call) error {
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if err != nil {
		return err
	}
	atoms := fsm.Secrets(c.org)
	out := make([]secretJSON, len(atoms))
	for i := range atoms {
		out[i] = renderSecret(&atoms[i])
	}
	return s.ok(c, map[string]any{"secrets": out})
}

func (s *Server) secretByAlias(c *call) error {
	alias := c.param("alias")
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if err != nil {
		return err
	}
	a, ok := fsm.Secret(c.org, secretRefPref+alias)
	if !validAlias(alias) || !ok {
		return notFound("Secret not found")
	}
	return s.ok(c, renderSecret(&a))
}
