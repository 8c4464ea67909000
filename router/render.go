package router

import (
	"encoding/json"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

// timeFormat is RFC 3339 in UTC with Z and microseconds (operator.md §8).
const timeFormat = "2006-01-02T15:04:05.000000Z"

func formatMicros(us int64) string { return time.UnixMicro(us).UTC().Format(timeFormat) }

func optMicros(us int64) *string {
	if us == 0 {
		return nil
	}
	s := formatMicros(us)
	return &s
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func idStrings(ids []raftfsm.ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

func optID(id raftfsm.ID) *string {
	if id.IsZero() {
		return nil
	}
	s := id.String()
	return &s
}

func metadataJSON(m []byte) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(m)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type provenanceJSON struct {
	Principal  string `json:"principal"`
	Agent      string `json:"agent"`
	ClientEnv  string `json:"client_env"`
	IsExternal bool   `json:"is_external"`
	RecordedAt string `json:"recorded_at"`
}

func renderProvenance(p *raftfsm.Provenance) *provenanceJSON {
	if p == nil {
		return nil
	}
	return &provenanceJSON{Principal: p.Principal, Agent: p.Agent, ClientEnv: p.ClientEnv,
		IsExternal: p.IsExternal, RecordedAt: formatMicros(p.RecordedAt)}
}

// atomJSON is the full atom envelope of lookups and export lines.
type atomJSON struct {
	AtomID         string          `json:"atom_id"`
	Content        string          `json:"content"`
	Concepts       []string        `json:"concepts"`
	Domain         string          `json:"domain"`
	Metadata       json.RawMessage `json:"metadata"`
	Fingerprint    *string         `json:"fingerprint"`
	ExternalRef    *string         `json:"external_ref"`
	Importance     float64         `json:"importance"`
	Valence        float64         `json:"valence"`
	AtomType       string          `json:"atom_type"`
	Supersedes     []string        `json:"supersedes"`
	SupersededBy   *string         `json:"superseded_by"`
	CreatedAt      string          `json:"created_at"`
	AccessCount    int64           `json:"access_count"`
	LastAccessedAt *string         `json:"last_accessed_at"`
	Provenance     *provenanceJSON `json:"provenance,omitempty"`
}

func renderAtom(a *raftfsm.Atom) atomJSON {
	return atomJSON{
		AtomID: a.ID.String(), Content: a.Content, Concepts: nonNil(a.Concepts), Domain: a.Domain,
		Metadata: metadataJSON(a.Metadata), Fingerprint: optString(a.Fingerprint),
		ExternalRef: optString(a.ExternalRef), Importance: a.Importance, Valence: a.Valence,
		AtomType: a.Type.String(), Supersedes: idStrings(a.Supersedes), SupersededBy: optID(a.SupersededBy),
		CreatedAt: formatMicros(a.CreatedAt), AccessCount: a.AccessCount,
		LastAccessedAt: optMicros(a.LastAccessedAt), Provenance: renderProvenance(a.Provenance),
	}
}

// memoryItemJSON is a search result (interface §2.4).
type memoryItemJSON struct {
	AtomID       string          `json:"atom_id"`
	Content      string          `json:"content"`
	Relevance    float64         `json:"relevance"`
	Similarity   float64         `json:"similarity"`
	Valence      float64         `json:"valence"`
	Importance   float64         `json:"importance"`
	Source       string          `json:"source"`
	Concepts     []string        `json:"concepts"`
	Domain       string          `json:"domain"`
	Metadata     json.RawMessage `json:"metadata"`
	Provenance   *provenanceJSON `json:"provenance,omitempty"`
	Supersedes   []string        `json:"supersedes,omitempty"`
	SupersededBy *string         `json:"superseded_by,omitempty"`
	CreatedAt    string          `json:"created_at"`
}

func renderItem(it *raftfsm.Item) memoryItemJSON {
	a := &it.Atom
	m := memoryItemJSON{
		AtomID: a.ID.String(), Content: a.Content, Relevance: it.Relevance, Similarity: it.Similarity,
		Valence: a.Valence, Importance: a.Importance, Source: it.Source, Concepts: nonNil(a.Concepts),
		Domain: a.Domain, Metadata: metadataJSON(a.Metadata), Provenance: renderProvenance(a.Provenance),
		SupersededBy: optID(a.SupersededBy), CreatedAt: formatMicros(a.CreatedAt),
	}
	if len(a.Supersedes) > 0 {
		m.Supersedes = idStrings(a.Supersedes)
	}
	return m
}

// recentItemJSON is a feed entry (interface §2.6).
type recentItemJSON struct {
	AtomID       string          `json:"atom_id"`
	Content      string          `json:"content"`
	Domain       string          `json:"domain"`
	CreatedAt    string          `json:"created_at"`
	Concepts     []string        `json:"concepts"`
	Provenance   *provenanceJSON `json:"provenance,omitempty"`
	Supersedes   []string        `json:"supersedes,omitempty"`
	SupersededBy *string         `json:"superseded_by,omitempty"`
}

func renderRecent(a *raftfsm.Atom) recentItemJSON {
	r := recentItemJSON{AtomID: a.ID.String(), Content: a.Content, Domain: a.Domain,
		CreatedAt: formatMicros(a.CreatedAt), Concepts: nonNil(a.Concepts),
		Provenance: renderProvenance(a.Provenance), SupersededBy: optID(a.SupersededBy)}
	if len(a.Supersedes) > 0 {
		r.Supersedes = idStrings(a.Supersedes)
	}
	return r
}
