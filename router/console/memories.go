package console

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// feedPageSize is how many feed entries one page of the Memories feed
// loads.
const feedPageSize = 20

type feedData struct {
	Items    []recentItem
	Next     string // URL of the next page ("" at the end)
	NextFeed string // the same page as a fragment, for infinite scrolling
}

type memoriesData struct {
	Domains []domainChoice
	Domain  string
	History bool
	Feed    feedData
	Search  *searchData
	Owner   bool
	HideOn  bool
}

// searchData is a search form and its result.
type searchData struct {
	Q, TopK, Domain, MinRelevance, Diversity, Concepts, Fingerprint string
	AuthorPrincipal, AuthorAgent, AuthorClientEnv                   string
	Associations, IncludeHistory, ExternalOnly, Timings             bool
	Result                                                          *readResult
	Error                                                           string
}

func (c *Console) memories(w http.ResponseWriter, r *http.Request, v *view) {
	org := v.Me.OrgID
	d := memoriesData{Domains: c.domainChoices(r, org), Domain: trimmed(r, "domain"), History: r.URL.Query().Get("history") == "1",
		Owner: v.Me.Owner(), HideOn: c.b.Settings(org).HideReplaced}
	v.Nav, v.Title = "memories", "Memories"
	if q := trimmed(r, "q"); q != "" {
		d.Search = c.search(r, org)
	} else {
		feed, err := c.feed(r, org)
		if err != nil {
			c.failAPI(w, r, v, err)
			return
		}
		d.Feed = feed
	}
	v.Data = d
	c.render(w, http.StatusOK, "memories", v)
}

// memoriesFeed answers one page of the feed as an HTML fragment.
func (c *Console) memoriesFeed(w http.ResponseWriter, r *http.Request, v *view) {
	feed, err := c.feed(r, v.Me.OrgID)
	if err != nil {
		c.failAPI(w, r, v, err)
		return
	}
	c.renderBlock(w, "memories", "feed", feed)
}

// feed reads one page of POST /memory/recent for the query's domain,
// history switch and cursor.
func (c *Console) feed(r *http.Request, org string) (feedData, error) {
	body := map[string]any{"limit": feedPageSize}
	q := url.Values{}
	if d := trimmed(r, "domain"); d != "" {
		body["domain"] = d
		q.Set("domain", d)
	}
	if r.URL.Query().Get("history") == "1" {
		body["include_history"] = true
		q.Set("history", "1")
	}
	if cur := trimmed(r, "cursor"); cur != "" {
		body["cursor"] = cur
	}
	var page recentPage
	if err := c.rest(r.Context(), org, http.MethodPost, "/memory/recent", body, &page); err != nil {
		return feedData{}, err
	}
	d := feedData{Items: page.Items}
	if page.NextCursor != nil && *page.NextCursor != "" {
		q.Set("cursor", *page.NextCursor)
		d.Next = Base + "/memories?" + q.Encode()
		d.NextFeed = Base + "/memories/feed?" + q.Encode()
	}
	return d, nil
}

// search runs POST /memory/read with every option of the form.
func (c *Console) search(r *http.Request, org string) *searchData {
	q := r.URL.Query()
	s := &searchData{Q: trimmed(r, "q"), TopK: trimmed(r, "top_k"), Domain: trimmed(r, "domain"),
		MinRelevance: trimmed(r, "min_relevance"), Diversity: trimmed(r, "diversity"), Concepts: trimmed(r, "concepts"),
		Fingerprint: trimmed(r, "fingerprint"), AuthorPrincipal: trimmed(r, "author_principal"),
		AuthorAgent: trimmed(r, "author_agent"), AuthorClientEnv: trimmed(r, "author_client_env"), Associations: true}
	if q.Get("s") == "1" { // the full form was sent: unchecked boxes mean false
		s.Associations = q.Get("associations") == "on"
		s.IncludeHistory = q.Get("include_history") == "on"
		s.ExternalOnly = q.Get("external_only") == "on"
		s.Timings = q.Get("timings") == "on"
	}
	body := map[string]any{"query": s.Q, "include_associations": s.Associations, "include_history": s.IncludeHistory}
	if s.Timings {
		body["include_timings"] = true
	}
	for k, raw := range map[string]string{"top_k": s.TopK, "min_relevance": s.MinRelevance, "diversity": s.Diversity} {
		if raw == "" {
			continue
		}
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			s.Error = k + ": enter a number."
			return s
		}
		if k == "top_k" {
			body[k] = int(f)
		} else {
			body[k] = f
		}
	}
	for k, val := range map[string]string{"domain": s.Domain, "fingerprint": s.Fingerprint,
		"author_principal": s.AuthorPrincipal, "author_agent": s.AuthorAgent, "author_client_env": s.AuthorClientEnv} {
		if val != "" {
			body[k] = val
		}
	}
	if s.Concepts != "" {
		var cs []string
		for _, x := range strings.Split(s.Concepts, ",") {
			if x = strings.TrimSpace(x); x != "" {
				cs = append(cs, x)
			}
		}
		body["concepts"] = cs
	}
	if s.ExternalOnly {
		body["author_is_external"] = true
	}
	var res readResult
	if err := c.rest(r.Context(), org, http.MethodPost, "/memory/read", body, &res); err != nil {
		if e, ok := err.(*apiError); ok { //nolint:errorlint // rest returns it unwrapped
			s.Error = e.Text()
		} else {
			s.Error = "The search failed; try again."
		}
		return s
	}
	s.Result = &res
	return s
}

type memoryData struct {
	Atom  atom
	Chain chain
	Owner bool
}

func (c *Console) loadMemory(w http.ResponseWriter, r *http.Request, v *view) (memoryData, bool) {
	id := r.PathValue("id")
	d := memoryData{Owner: v.Me.Owner()}
	if err := c.rest(r.Context(), v.Me.OrgID, http.MethodGet, "/memory/atoms/"+url.PathEscape(id), nil, &d.Atom); err != nil {
		c.failAPI(w, r, v, err)
		return d, false
	}
	if err := c.rest(r.Context(), v.Me.OrgID, http.MethodGet, "/memory/atoms/"+url.PathEscape(id)+"/chain", nil, &d.Chain); err != nil {
		c.failAPI(w, r, v, err)
		return d, false
	}
	return d, true
}

func (c *Console) memory(w http.ResponseWriter, r *http.Request, v *view) {
	d, ok := c.loadMemory(w, r, v)
	if !ok {
		return
	}
	v.Nav, v.Title, v.Data = "memories", "Memory", d
	c.render(w, http.StatusOK, "memory", v)
}

// memoryDeletePage is the confirmation step when scripts are off (the
// detail page asks in a dialog otherwise).
func (c *Console) memoryDeletePage(w http.ResponseWriter, r *http.Request, v *view) {
	d, ok := c.loadMemory(w, r, v)
	if !ok {
		return
	}
	v.Nav, v.Title, v.Data = "memories", "Delete memory", d
	c.render(w, http.StatusOK, "delete", v)
}

func (c *Console) memoryDelete(w http.ResponseWriter, r *http.Request, v *view) {
	if r.PostFormValue("confirm") != "yes" {
		http.Redirect(w, r, Base+"/memories/"+url.PathEscape(r.PathValue("id"))+"/delete", http.StatusSeeOther)
		return
	}
	var res struct {
		Deleted         int      `json:"deleted"`
		HistoryDestroy  bool     `json:"history_destroyed"`
		LeftHidden      []string `json:"superseded_predecessors_left_hidden"`
		SupersededCount int
	}
	if err := c.rest(r.Context(), v.Me.OrgID, http.MethodDelete, "/memory/atoms/"+url.PathEscape(r.PathValue("id")), nil, &res); err != nil {
		c.failAPI(w, r, v, err)
		return
	}
	msg := "Memory deleted."
	if res.Deleted == 0 {
		msg = "That memory was already gone."
	} else if res.HistoryDestroy {
		msg = "Memory deleted. It was part of a revision chain; the chain now has a gap."
	}
	c.redirect(w, r, Base+"/memories", msg)
}

// renderBlock writes one named block of a page's template (a fragment).
func (c *Console) renderBlock(w http.ResponseWriter, page, block string, data any) {
	var buf bytes.Buffer
	if err := c.pages.byName[page].ExecuteTemplate(&buf, block, data); err != nil {
		c.log.Error("console: cannot render fragment", "page", page, "err", err)
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}
