package console

import (
	"net/http"
	"strings"
	"time"
)

type overviewData struct {
	Used       int64
	Quota      int64
	Atoms      int64
	AtomLimit  int64
	Stats      stats
	Rooms      int
	Keys       int
	APIBase    string
	ResetsIn   string
	HideOn     bool
	StatsError string
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, v *view) {
	org := v.Me.OrgID
	set := c.b.Settings(org)
	d := overviewData{Used: c.b.UsedToday(org), Quota: set.Plan.DailyQueryQuota, AtomLimit: set.Plan.AtomLimit,
		APIBase: c.cfg.PublicURL + "/api/v1", HideOn: set.HideReplaced, ResetsIn: span(untilMidnight(time.Now()))}
	if err := c.rest(r.Context(), org, http.MethodGet, "/memory/stats", nil, &d.Stats); err != nil {
		d.StatsError = "Memory statistics are unavailable right now."
	}
	d.Atoms = d.Stats.TotalAtoms
	var rooms struct {
		Rooms []roomItem `json:"rooms"`
	}
	if c.rest(r.Context(), org, http.MethodGet, "/memory/rooms", nil, &rooms) == nil {
		d.Rooms = len(rooms.Rooms)
	}
	for _, k := range c.b.Meta().Keys(org) {
		if !k.Revoked {
			d.Keys++
		}
	}
	v.Nav, v.Title, v.Data = "overview", "Overview", d
	c.render(w, http.StatusOK, "overview", v)
}

func untilMidnight(now time.Time) time.Duration {
	now = now.UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return next.Sub(now)
}

// domainChoices are the domains a feed can be narrowed to: the org's own
// and the rooms it belongs to.
type domainChoice struct {
	Value, Label string
}

func (c *Console) domainChoices(r *http.Request, org string) []domainChoice {
	var out []domainChoice
	var st stats
	if c.rest(r.Context(), org, http.MethodGet, "/memory/stats", nil, &st) == nil {
		for _, d := range st.Domains {
			out = append(out, domainChoice{Value: d, Label: d})
		}
	}
	var rooms struct {
		Rooms []roomItem `json:"rooms"`
	}
	if c.rest(r.Context(), org, http.MethodGet, "/memory/rooms", nil, &rooms) == nil {
		for _, rm := range rooms.Rooms {
			if rm.Status == "active" {
				out = append(out, domainChoice{Value: rm.Address, Label: "Room · " + rm.Name})
			}
		}
	}
	return out
}

func trimmed(r *http.Request, k string) string { return strings.TrimSpace(r.URL.Query().Get(k)) }
