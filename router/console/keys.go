package console

import (
	"net/http"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

const maxKeyLabel = 100

type keyRow struct {
	cluster.KeyInfo
	LastUsed time.Time
}

type keysData struct {
	Keys    []keyRow
	NewKey  string // shown once, right after creation
	NewID   string
	APIBase string
	Owner   bool
	Label   string
}

func (c *Console) keysData(v *view) keysData {
	meta := c.b.Meta()
	d := keysData{APIBase: c.cfg.PublicURL + "/api/v1", Owner: v.Me.Owner()}
	keys := meta.Keys(v.Me.OrgID)
	for i := len(keys) - 1; i >= 0; i-- { // newest first
		row := keyRow{KeyInfo: keys[i]}
		row.LastUsed, _ = meta.ConsoleKeyLastUsed(keys[i].KeyID)
		d.Keys = append(d.Keys, row)
	}
	return d
}

func (c *Console) keys(w http.ResponseWriter, r *http.Request, v *view) {
	v.Nav, v.Title, v.Data = "keys", "API keys", c.keysData(v)
	c.render(w, http.StatusOK, "keys", v)
}

// createKey makes a key and shows it once, in this answer only.
func (c *Console) createKey(w http.ResponseWriter, r *http.Request, v *view) {
	label := strings.TrimSpace(r.PostFormValue("label"))
	d := c.keysData(v)
	v.Nav, v.Title = "keys", "API keys"
	if problem := nameProblem(label, "label", maxKeyLabel); problem != "" {
		d.Label, v.Error, v.Data = label, problem, d
		c.render(w, http.StatusBadRequest, "keys", v)
		return
	}
	raw, err := cluster.GenerateKey()
	if err != nil {
		c.fail(w, r, v, http.StatusInternalServerError, "Cannot create a key right now.")
		return
	}
	rec, err := cluster.NewKeyRecord(raw, v.Me.OrgID, label, time.Now().UTC())
	if err == nil {
		_, err = c.metaResult(r.Context(), cluster.EncodeCreateKey(cluster.CreateKey{NewKey: rec}))
	}
	if err != nil {
		c.log.Error("console: cannot create key", "err", err)
		c.fail(w, r, v, http.StatusServiceUnavailable, "Cannot create a key right now; try again.")
		return
	}
	meta := c.b.Meta()
	waitLocal(r.Context(), func() bool { _, ok := meta.Key(rec.KeyID); return ok })
	d = c.keysData(v)
	d.NewKey, d.NewID = raw, rec.KeyID
	v.Data = d
	c.render(w, http.StatusOK, "keys", v)
}

// revokeKey revokes a key of the session's org; another org's key is
// answered as unknown.
func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, v *view) {
	id := r.PathValue("id")
	var k cluster.KeyInfo
	var ok bool
	// A key created through another node a moment ago is looked for again
	// once this node's replica caught up, rather than refused as unknown.
	c.b.Meta().Synced(r.Context(), func() bool { k, ok = c.b.Meta().Key(id); return ok })
	if !ok || k.OrgID != v.Me.OrgID {
		c.fail(w, r, v, http.StatusNotFound, "There is no such key in "+v.Me.OrgName+".")
		return
	}
	if _, err := c.metaResult(r.Context(), cluster.EncodeRevokeKey(cluster.RevokeKey{KeyID: id, At: time.Now().UTC()})); err != nil {
		c.log.Error("console: cannot revoke key", "err", err)
		c.fail(w, r, v, http.StatusServiceUnavailable, "Cannot revoke the key right now; try again.")
		return
	}
	waitLocal(r.Context(), func() bool { k, _ := c.b.Meta().Key(id); return k.Revoked })
	name := k.Label
	if name == "" {
		name = k.Prefix
	}
	c.redirect(w, r, Base+"/keys", "Key "+name+" revoked. Requests with it now get 401 revoked_key.")
}

type settingsData struct {
	Settings cluster.Settings
	Owner    bool
	People   []person
}

type person struct {
	Email string
	Role  string
	Me    bool
}

func (c *Console) settings(w http.ResponseWriter, r *http.Request, v *view) {
	d := settingsData{Settings: c.b.Settings(v.Me.OrgID), Owner: v.Me.Owner()}
	for _, u := range c.b.Meta().ConsoleOrgUsers(v.Me.OrgID) {
		d.People = append(d.People, person{Email: u.Email, Role: u.Role(v.Me.OrgID), Me: u.ID == v.Me.UserID})
	}
	v.Nav, v.Title, v.Data = "settings", "Settings", d
	c.render(w, http.StatusOK, "settings", v)
}

func (c *Console) saveSettings(w http.ResponseWriter, r *http.Request, v *view) {
	hide := r.PostFormValue("hide_replaced") == "on"
	org := v.Me.OrgID
	if _, err := c.metaResult(r.Context(), cluster.EncodeUpdateSettings(cluster.UpdateSettings{OrgID: org, HideReplaced: &hide})); err != nil {
		c.log.Error("console: cannot save settings", "err", err)
		c.fail(w, r, v, http.StatusServiceUnavailable, "Cannot save the settings right now; try again.")
		return
	}
	waitLocal(r.Context(), func() bool { return c.b.Settings(org).HideReplaced == hide })
	msg := "Replaced memories are shown again in search and the feed."
	if hide {
		msg = "Replaced memories are now hidden from search and the feed."
	}
	c.redirect(w, r, Base+"/settings", msg)
}
