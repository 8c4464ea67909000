package router

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hebbdb/hebb/raftfsm"
)

const atomNotFound = "Atom not found"

// pathID parses the {atom_id} path segment; a malformed ID is a 404 like
// any other unknown atom (the path names no atom).
func pathID(c *call) (raftfsm.ID, bool) {
	s := c.param("atom_id")
	id, err := raftfsm.ParseID(strings.TrimSpace(s))
	return id, err == nil
}

func (s *Server) getAtom(c *call) error {
	if err := refuseByExternalRef(c); err != nil {
		return err
	}
	id, ok := pathID(c)
	if !ok {
		return notFound(atomNotFound)
	}
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if err != nil {
		return err
	}
	a, found := fsm.Get(c.org, id)
	if !found {
		return notFound(atomNotFound)
	}
	return s.ok(c, renderAtom(&a))
}

type byRefRequest struct {
	ExternalRef *string `json:"external_ref"`
}

func (s *Server) byExternalRef(c *call) error {
	var req byRefRequest
	if err := decodeBody(c.ctx.PostBody(), &req, false); err != nil {
		return err
	}
	v := &validator{}
	if req.ExternalRef == nil {
		v.add("missing", "Field required", "external_ref")
	} else {
		v.strLen(*req.ExternalRef, 1, maxExternalRef, "external_ref")
	}
	if err := v.err(); err != nil {
		return err
	}
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if err != nil {
		return err
	}
	a, found := fsm.GetByExternalRef(c.org, *req.ExternalRef)
	if !found {
		return notFound(atomNotFound)
	}
	return s.ok(c, renderAtom(&a))
}

type chainRevisionJSON struct {
	ID           string   `json:"id"`
	Content      string   `json:"content"`
	Domain       string   `json:"domain"`
	Concepts     []string `json:"concepts"`
	CreatedAt    string   `json:"created_at"`
	IsHead       bool     `json:"is_head"`
	Supersedes   []string `json:"supersedes,omitempty"`
	SupersededBy *string  `json:"superseded_by,omitempty"`
}

type chainJSON struct {
	AtomID    string              `json:"atom_id"`
	Revisions []chainRevisionJSON `json:"revisions"`
	Dangling  []string            `json:"dangling"`
	Truncated bool                `json:"truncated"`
}

func (s *Server) chain(c *call) error {
	id, ok := pathID(c)
	if !ok {
		return notFound(atomNotFound)
	}
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if err != nil {
		return err
	}
	res, found := fsm.Chain(c.org, id)
	if !found {
		return notFound(atomNotFound)
	}
	out := chainJSON{AtomID: id.String(), Revisions: make([]chainRevisionJSON, len(res.Revisions)),
		Dangling: idStrings(res.Dangling), Truncated: res.Truncated}
	for i, r := range res.Revisions {
		a := &r.Atom
		rev := chainRevisionJSON{ID: a.ID.String(), Content: a.Content, Domain: a.Domain,
			Concepts: nonNil(a.Concepts), CreatedAt: formatMicros(a.CreatedAt), IsHead: r.IsHead,
			SupersededBy: optID(a.SupersededBy)}
		if len(a.Supersedes) > 0 {
			rev.Supersedes = idStrings(a.Supersedes)
		}
		out.Revisions[i] = rev
	}
	return s.ok(c, out)
}

type deleteAtomJSON struct {
	Deleted                int      `json:"deleted"`
	AtomID                 string   `json:"atom_id"`
	PredecessorsLeftHidden []string `json:"superseded_predecessors_left_hidden"`
	HistoryDestroyed       bool     `json:"history_destroyed"`
}

// refuseByExternalRef answers a GET or DELETE of
// /memory/atoms/by-external-ref, which the {atom_id} routes match, as the
// router answers a wrong method: 405 with the Allow header (it was 404
// "Atom not found", or a DELETE's 200 deleted 0).
func refuseByExternalRef(c *call) error {
	if c.param("atom_id") != "by-external-ref" {
		return nil
	}
	c.ctx.Response.Header.Set("Allow", "POST")
	return newError(405, codeMethod, "Method not allowed")
}

func (s *Server) deleteAtom(c *call) error {
	if err := refuseByExternalRef(c); err != nil {
		return err
	}
	id, ok := pathID(c)
	if !ok {
		return s.ok(c, deleteAtomJSON{AtomID: c.param("atom_id"), PredecessorsLeftHidden: []string{}})
	}
	out, err := s.backend.Propose(c.std, c.org, (&raftfsm.DeleteAtomCmd{Tenant: c.org, ID: id}).Encode())
	if err != nil {
		return err
	}
	res, ok := out.(*raftfsm.DeleteAtomResult)
	if !ok {
		return fmt.Errorf("unexpected delete result %T", out)
	}
	if res.Err != nil {
		return forbidden(res.Err.Message)
	}
	if res.Deleted == 0 {
		if err := s.refuseRoomAtom(c, id); err != nil {
			return err
		}
	}
	return s.ok(c, deleteAtomJSON{Deleted: res.Deleted, AtomID: id.String(),
		PredecessorsLeftHidden: idStrings(res.PredecessorsLeftHidden), HistoryDestroyed: res.HistoryDestroyed})
}

// refuseRoomAtom answers 404 when id names an atom that lives in a room
// the caller is or was in: atom deletion reaches the caller's own account
// only, and a room atom is not "already gone" (interface §7.2), not even
// for its writer. To anyone else the ID answers as any unknown one does
// (200, deleted 0), so a DELETE cannot probe whether a UUID is an atom in
// someone's room.
func (s *Server) refuseRoomAtom(c *call, id raftfsm.ID) error {
	in, err := s.backend.InRoom(c.std, c.org, id)
	if err != nil {
		return err
	}
	if in {
		return notFound(atomNotFound)
	}
	return nil
}

type deleteDomainJSON struct {
	Deleted          int    `json:"deleted"`
	Domain           string `json:"domain"`
	SkippedSecrets   int    `json:"skipped_secrets"`
	OrphanEdges      int    `json:"orphan_edges_removed"`
	LeftHiddenCount  int    `json:"superseded_predecessors_left_hidden_count"`
	HistoryDestroyed bool   `json:"history_destroyed"`
}

const roomDeleteMsg = "Room domains (xroom:) are not supported on this delete endpoint."

func (s *Server) deleteDomain(c *call) error {
	domain := c.param("domain")
	if err := privateDomain(domain, roomDeleteMsg, "domain"); err != nil {
		err.Details["errors"] = relocatePath(err)
		return err
	}
	out, perr := s.backend.Propose(c.std, c.org, (&raftfsm.DeleteDomainCmd{Tenant: c.org, Domain: domain}).Encode())
	if perr != nil {
		return perr
	}
	res, ok := out.(*raftfsm.DeleteDomainResult)
	if !ok {
		return fmt.Errorf("unexpected delete result %T", out)
	}
	if res.Err != nil {
		if errors.Is(res.Err, raftfsm.ErrNotFound) {
			return notFound("Domain not found")
		}
		return internalError()
	}
	return s.ok(c, deleteDomainJSON{Deleted: res.Deleted, Domain: domain, SkippedSecrets: res.SkippedSecrets,
		LeftHiddenCount: res.LeftHiddenCount, HistoryDestroyed: res.LeftHiddenCount > 0})
}

// relocatePath moves body locations of a path-parameter error to the path.
func relocatePath(e *apiError) []fieldError {
	errs, _ := e.Details["errors"].([]fieldError)
	for i := range errs {
		errs[i].Loc = append([]any{"path"}, errs[i].Loc[1:]...)
	}
	return errs
}

type statsJSON struct {
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

func (s *Server) stats(c *call) error {
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if err != nil {
		return err
	}
	st := fsm.Stats(c.org)
	return s.ok(c, statsJSON{TotalAtoms: st.TotalAtoms, Episodes: st.Episodes, Prototypes: st.Prototypes,
		Singletons: st.Singletons, HebbianEdges: st.HebbianEdges, EpisodicFingerprints: st.EpisodicFingerprints,
		Domains: nonNil(st.Domains), AvgValence: st.AvgValence, AvgImportance: st.AvgImportance})
}

func (s *Server) domains(c *call) error {
	fsm, err := s.backend.ReadFSM(c.std, c.org)
	if err != nil {
		return err
	}
	return s.ok(c, map[string][]string{"domains": nonNil(fsm.Domains(c.org))})
}

func (s *Server) reset(c *call) error {
	if !s.cfg.EnableReset {
		return forbidden("Reset is disabled on this deployment (start the server with --enable-reset)")
	}
	// Refused at boot with more than one org (interface §4.7), and so once a
	// second org exists: a reset wipes every tenant, not the caller's.
	meta := s.backend.Meta()
	if err := meta.Sync(c.std); err != nil {
		return err
	}
	if meta.OrgCount() > 1 {
		return forbidden("Reset is disabled: this deployment has more than one org, and a reset would wipe every tenant")
	}
	if _, err := s.backend.ProposeAll(c.std, (&raftfsm.ResetCmd{}).Encode()); err != nil {
		return err
	}
	return s.ok(c, map[string]string{"status": "cleared"})
}
