package router

import (
	"encoding/base64"
	"encoding/binary"
	"strings"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

const (
	maxRecentLimit     = 100
	defaultRecentLimit = 20
)

type recentRequest struct {
	Domain         *string `json:"domain"`
	Since          *string `json:"since"`
	Until          *string `json:"until"`
	ExcludeAuthor  *string `json:"exclude_author"`
	IncludeHistory *bool   `json:"include_history"`
	Limit          *int    `json:"limit"`
	Cursor         *string `json:"cursor"`
}

type recentJSON struct {
	Items      []recentItemJSON `json:"items"`
	NextCursor *string          `json:"next_cursor"`
}

// recent is POST /memory/recent: the queryless feed, newest first.
func (s *Server) recent(c *call) error {
	var req recentRequest
	if body := c.ctx.PostBody(); len(body) > 0 { // every field is optional: no body is {}
		if err := decodeBody(body, &req, false); err != nil {
			return err
		}
	}
	v := &validator{}
	q := raftfsm.RecentRequest{Tenant: c.org, Limit: defaultRecentLimit, HideReplaced: c.settings.HideReplaced,
		IncludeHistory: boolOr(req.IncludeHistory, false)}
	if req.Limit != nil {
		v.intRange(*req.Limit, 1, maxRecentLimit, "limit")
		q.Limit = *req.Limit
	}
	q.Since = v.instant(req.Since, true, "since")
	q.Until = v.instant(req.Until, false, "until")
	if req.ExcludeAuthor != nil {
		q.ExcludeAuthor = *req.ExcludeAuthor
	}
	if req.Cursor != nil && *req.Cursor != "" {
		cur, ok := decodeCursor(*req.Cursor)
		if !ok {
			v.add("value_error", "Invalid cursor: pass next_cursor from a previous response", "cursor")
		}
		q.Cursor = cur
	}
	if req.Domain != nil {
		v.strLen(*req.Domain, 0, maxDomain, "domain")
	}
	if err := v.err(); err != nil {
		return err
	}
	if req.Domain != nil {
		kind, id, derr := classifyDomain(*req.Domain)
		if derr != nil {
			return derr
		}
		if kind == domainRoom {
			tenant, err := s.roomTenant(c, id, false)
			if err != nil {
				return err
			}
			q.Tenant, q.IncludeHistory = tenant, false
		} else {
			q.Domains = []string{orDefault(*req.Domain)}
		}
	}
	fsm, err := s.backend.ReadFSM(c.std, q.Tenant)
	if err != nil {
		return err
	}
	atoms, next := fsm.Recent(&q)
	out := recentJSON{Items: make([]recentItemJSON, len(atoms))}
	for i := range atoms {
		out.Items[i] = renderRecent(&atoms[i])
	}
	if next != nil {
		s := encodeCursor(next)
		out.NextCursor = &s
	}
	return s.ok(c, out)
}

func encodeCursor(c *raftfsm.Cursor) string {
	var b [24]byte
	binary.BigEndian.PutUint64(b[:8], uint64(c.CreatedAt))
	copy(b[8:], c.ID[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func decodeCursor(s string) (*raftfsm.Cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 24 {
		return nil, false
	}
	c := &raftfsm.Cursor{CreatedAt: int64(binary.BigEndian.Uint64(b[:8]))}
	copy(c.ID[:], b[8:])
	return c, true
}

// instant parses an ISO-8601 instant; a naive datetime is read as UTC.
// Stamps are microseconds: a lower bound finer than that rounds up, an
// upper bound down, so both stay inclusive of exactly what they admit.
func (v *validator) instant(s *string, lower bool, loc ...any) *int64 {
	if s == nil || *s == "" {
		return nil
	}
	t, ok := parseInstant(*s)
	if !ok {
		v.add("datetime_parsing", "Input should be a valid ISO-8601 datetime", loc...)
		return nil
	}
	us := t.UnixMicro()
	if lower && t.After(time.UnixMicro(us)) {
		us++
	}
	return &us
}

// instantLayouts are the ISO-8601 forms an instant may take: seconds
// (with or without a fraction) or minutes, a 'T' or a space, an offset as
// Z, +hh:mm, +hhmm or +hh, or none (UTC); or a date alone.
var instantLayouts = func() []string {
	var out []string
	for _, sep := range []string{"T", " "} {
		for _, clock := range []string{"15:04:05.999999999", "15:04"} {
			for _, zone := range []string{"Z07:00", "Z0700", "Z07", ""} {
				out = append(out, "2006-01-02"+sep+clock+zone)
			}
		}
	}
	return append(out, "2006-01-02")
}()

func parseInstant(s string) (time.Time, bool) {
	// RFC 3339 §5.6: the 't' and 'z' may be lower case (no other letter
	// belongs in an instant).
	s = strings.ToUpper(strings.TrimSpace(s))
	for _, layout := range instantLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
