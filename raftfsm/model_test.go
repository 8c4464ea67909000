package raftfsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hebbdb/hebb/vecmath"
)

// model is a plain reference implementation of the write, feedback, touch
// and delete semantics: a flat list of atoms per tenant, scanned linearly,
// with none of the FSM's indexes. Edges are not modelled (the replica and
// snapshot tests cover them through StateHash).
type model struct {
	tenants map[string]*modelTenant
}

type modelTenant struct {
	atoms []*Atom // insertion order = feed order
	vecs  map[ID][]float32
	last  int64
}

func newModel() *model { return &model{tenants: map[string]*modelTenant{}} }

func (m *model) tenant(id string) *modelTenant {
	t := m.tenants[id]
	if t == nil {
		t = &modelTenant{vecs: map[ID][]float32{}}
		m.tenants[id] = t
	}
	return t
}

func (t *modelTenant) find(id ID) *Atom {
	for _, a := range t.atoms {
		if a.ID == id {
			return a
		}
	}
	return nil
}

func (t *modelTenant) byRef(ref string) *Atom {
	for _, a := range t.atoms {
		if a.ExternalRef == ref {
			return a
		}
	}
	return nil
}

func (t *modelTenant) remove(id ID) {
	t.atoms = slices.DeleteFunc(t.atoms, func(a *Atom) bool { return a.ID == id })
	delete(t.vecs, id)
}

// apply returns what the FSM's apply must return for c.
func (m *model) apply(c command) any {
	switch c := c.(type) {
	case *WriteCmd:
		return m.write(c)
	case *FeedbackCmd:
		return m.feedback(c)
	case *TouchCmd:
		for _, id := range c.IDs {
			if a := m.tenant(c.Tenant).find(id); a != nil {
				a.AccessCount++
				a.LastAccessedAt = max(a.LastAccessedAt, c.At)
			}
		}
		return nil
	case *DeleteAtomCmd:
		return m.deleteAtom(c)
	case *DeleteDomainCmd:
		return m.deleteDomain(c)
	case *ResetCmd:
		m.tenants = map[string]*modelTenant{}
		return nil
	}
	panic(fmt.Sprintf("model: %T", c))
}

func (m *model) write(c *WriteCmd) *WriteResults {
	t := m.tenant(c.Tenant)
	out := &WriteResults{Results: make([]WriteResult, len(c.Items))}
	for i, it := range c.Items {
		if it.Type != Secret && it.ExternalRef != "" {
			if a := t.byRef(it.ExternalRef); a != nil {
				out.Results[i] = WriteResult{AtomID: a.ID, Importance: a.Importance,
					Reason: "external_ref exists", Superseded: []ID{}}
				continue
			}
		}
		var targets []*Atom
		if !c.Batch {
			for _, id := range it.Supersedes {
				a := t.find(id)
				var err *ApplyError
				switch {
				case a == nil:
					err = &ApplyError{Kind: ErrNotFound, Target: id}
				case a.Type == Secret:
					err = &ApplyError{Kind: ErrSecretTarget, Target: id}
				case a.Superseded():
					err = &ApplyError{Kind: ErrConflict, Target: a.SupersededBy}
				}
				if err != nil {
					return &WriteResults{Err: err}
				}
				targets = append(targets, a)
			}
		}
		out.Results[i] = m.writeOne(t, it, targets)
	}
	return out
}

func (m *model) writeOne(t *modelTenant, it WriteItem, targets []*Atom) WriteResult {
	if it.Type == Secret {
		if a := t.byRef(it.ExternalRef); a != nil && a.Type == Secret {
			if a.ID != it.ID {
				return WriteResult{AtomID: a.ID, Reason: ReasonSecretIDMismatch, Superseded: []ID{}}
			}
			a.Sealed = it.Sealed
			if !it.KeepContent {
				a.Content = it.Content
			}
			return WriteResult{Stored: true, AtomID: a.ID, Reason: "replaced", Superseded: []ID{}}
		}
		m.insert(t, it, 0, nil)
		return WriteResult{Stored: true, AtomID: it.ID, Reason: "stored", Superseded: []ID{}}
	}
	var best *Atom
	var bestCos float32
	for _, a := range t.atoms {
		if a.Domain != it.Domain || a.Type == Secret || a.Superseded() || slices.Contains(targets, a) {
			continue
		}
		if cos := vecmath.DotFixed(it.Vector, t.vecs[a.ID]); best == nil || cos > bestCos {
			best, bestCos = a, cos
		}
	}
	importance := 1.0
	if best != nil {
		if float64(bestCos) >= 1-1e-6 {
			return WriteResult{Superseded: []ID{}, Reason: "duplicate of " + best.ID.String()}
		}
		importance = max(0, min(1, 1-float64(bestCos)))
	}
	superseded := []ID{}
	for _, a := range targets {
		a.SupersededBy = it.ID
		superseded = append(superseded, a.ID)
	}
	m.insert(t, it, importance, superseded)
	return WriteResult{Stored: true, AtomID: it.ID, Importance: importance, Reason: "stored",
		Superseded: superseded}
}

func (m *model) insert(t *modelTenant, it WriteItem, importance float64, supersedes []ID) {
	created := max(it.CreatedAt, t.last+1)
	t.last = created
	a := &Atom{ID: it.ID, Content: it.Content, Concepts: it.Concepts, Domain: it.Domain,
		Metadata: it.Metadata, Fingerprint: it.Fingerprint, ExternalRef: it.ExternalRef,
		Importance: importance, Type: it.Type, CreatedAt: created, Provenance: it.Provenance,
		Sealed: it.Sealed}
	if len(supersedes) > 0 {
		a.Supersedes = slices.Clone(supersedes)
	}
	t.atoms = append(t.atoms, a)
	t.vecs[a.ID] = it.Vector
}

func (m *model) feedback(c *FeedbackCmd) *FeedbackResult {
	res := &FeedbackResult{}
	t := m.tenants[c.Tenant]
	if t == nil {
		return res
	}
	outcome := max(-1, min(1, c.Outcome))
	var seen []ID
	sum := 0.0
	for _, id := range c.IDs {
		a := t.find(id)
		if a == nil || a.Type == Secret || slices.Contains(seen, id) {
			continue
		}
		seen = append(seen, id)
		a.Valence = max(-1, min(1, a.Valence+float64(0.3*(outcome-a.Valence))))
		sum += a.Valence
		res.Updated++
	}
	if res.Updated > 0 {
		res.AvgValence = sum / float64(res.Updated)
	}
	return res
}

func (m *model) deleteAtom(c *DeleteAtomCmd) *DeleteAtomResult {
	res := &DeleteAtomResult{PredecessorsLeftHidden: []ID{}}
	t := m.tenants[c.Tenant]
	if t == nil {
		return res
	}
	a := t.find(c.ID)
	switch {
	case a == nil:
		return res
	case a.Type == Secret:
		res.Err = &ApplyError{Kind: ErrForbidden, Target: a.ID}
		return res
	}
	for _, id := range a.Supersedes {
		if p := t.find(id); p != nil && p.SupersededBy == a.ID {
			res.PredecessorsLeftHidden = append(res.PredecessorsLeftHidden, id)
		}
	}
	res.Deleted, res.HistoryDestroyed = 1, len(a.Supersedes) > 0 || a.Superseded()
	t.remove(a.ID)
	return res
}

func (m *model) deleteDomain(c *DeleteDomainCmd) *DeleteDomainResult {
	res := &DeleteDomainResult{}
	t := m.tenants[c.Tenant]
	var victims []*Atom
	any := false
	if t != nil {
		for _, a := range t.atoms {
			if a.Domain != c.Domain {
				continue
			}
			any = true
			if a.Type == Secret {
				res.SkippedSecrets++
			} else {
				victims = append(victims, a)
			}
		}
	}
	if !any {
		return &DeleteDomainResult{Err: &ApplyError{Kind: ErrNotFound}}
	}
	for _, a := range victims {
		for _, id := range a.Supersedes {
			if p := t.find(id); p != nil && p.Domain != c.Domain && p.SupersededBy == a.ID {
				res.LeftHiddenCount++
			}
		}
	}
	for _, a := range victims {
		t.remove(a.ID)
	}
	res.Deleted = len(victims)
	return res
}

// diffResult describes how the FSM's apply result got differs from the
// model's want, or returns "".
func diffResult(got, want any) string {
	switch w := want.(type) {
	case nil:
		if got != nil {
			return fmt.Sprintf("result %v, want nil", got)
		}
	case *WriteResults:
		g := got.(*WriteResults)
		if d := diffErr(g.Err, w.Err); d != "" {
			return d
		}
		if len(g.Results) != len(w.Results) {
			return fmt.Sprintf("%d results, want %d", len(g.Results), len(w.Results))
		}
		for i := range w.Results {
			if d := diffWrite(g.Results[i], w.Results[i]); d != "" {
				return fmt.Sprintf("item %d: %s", i, d)
			}
		}
	case *FeedbackResult:
		g := got.(*FeedbackResult)
		if g.Updated != w.Updated || g.AvgValence != w.AvgValence {
			return fmt.Sprintf("feedback %+v, want %+v", g, w)
		}
	case *DeleteAtomResult:
		g := got.(*DeleteAtomResult)
		if g.Deleted != w.Deleted || g.HistoryDestroyed != w.HistoryDestroyed ||
			!slices.Equal(g.PredecessorsLeftHidden, w.PredecessorsLeftHidden) {
			return fmt.Sprintf("delete %+v, want %+v", g, w)
		}
		return diffErr(g.Err, w.Err)
	case *DeleteDomainResult:
		g := got.(*DeleteDomainResult)
		if g.Deleted != w.Deleted || g.SkippedSecrets != w.SkippedSecrets || g.LeftHiddenCount != w.LeftHiddenCount {
			return fmt.Sprintf("delete domain %+v, want %+v", g, w)
		}
		return diffErr(g.Err, w.Err)
	}
	return ""
}

func diffErr(got, want *ApplyError) string {
	switch {
	case got == nil && want == nil:
		return ""
	case got == nil || want == nil:
		return fmt.Sprintf("error %v, want %v", got, want)
	case got.Kind != want.Kind || (!want.Target.IsZero() && got.Target != want.Target):
		return fmt.Sprintf("error %v (%v, target %s), want %v target %s", got, got.Kind, got.Target, want.Kind, want.Target)
	}
	return ""
}

func diffWrite(g, w WriteResult) string {
	reasonOK := g.Reason == w.Reason
	if strings.HasPrefix(w.Reason, "duplicate of ") {
		// Which of several indistinguishable tips is named may differ.
		reasonOK = strings.HasPrefix(g.Reason, "duplicate of ")
	}
	if g.Stored != w.Stored || g.AtomID != w.AtomID || g.Importance != w.Importance || !reasonOK ||
		!slices.Equal(g.Superseded, w.Superseded) || g.Superseded == nil {
		return fmt.Sprintf("write %+v, want %+v", g, w)
	}
	return ""
}

// diffState compares every tenant's export with the model.
func (m *model) diffState(f *FSM, tenants []string) string {
	for _, name := range tenants {
		got, _ := f.ExportPage(name, nil, 1<<30)
		var want []*Atom
		if t := m.tenants[name]; t != nil {
			want = t.atoms
		}
		if len(got) != len(want) {
			return fmt.Sprintf("tenant %s: %d atoms, want %d", name, len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.ID != w.ID || g.Content != w.Content || g.Domain != w.Domain || g.Type != w.Type ||
				g.Importance != w.Importance || g.Valence != w.Valence || g.CreatedAt != w.CreatedAt ||
				g.SupersededBy != w.SupersededBy || !slices.Equal(g.Supersedes, w.Supersedes) ||
				g.AccessCount != w.AccessCount || g.LastAccessedAt != w.LastAccessedAt ||
				string(g.Sealed) != string(w.Sealed) || g.ExternalRef != w.ExternalRef ||
				g.Fingerprint != w.Fingerprint || string(g.Metadata) != string(w.Metadata) {
				return fmt.Sprintf("tenant %s atom %d:\n  got  %+v\n  want %+v", name, i, g, *w)
			}
		}
		nonSecret := 0
		for _, w := range want {
			if w.Type != Secret {
				nonSecret++
			}
		}
		if n := f.AtomCount(name); n != nonSecret {
			return fmt.Sprintf("tenant %s: atom count %d, want %d", name, n, nonSecret)
		}
	}
	return ""
}
