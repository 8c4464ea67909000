package console

import (
	"net/http"
	"strings"
)

type vaultData struct {
	Secrets []secret
	Owner   bool
	Alias   string
	Context string
	Off     bool
}

func (c *Console) vaultData(r *http.Request, v *view) (vaultData, error) {
	var res struct {
		Secrets []secret `json:"secrets"`
	}
	err := c.rest(r.Context(), v.Me.OrgID, http.MethodGet, "/vault/secrets", nil, &res)
	return vaultData{Secrets: res.Secrets, Owner: v.Me.Owner()}, err
}

func (c *Console) vault(w http.ResponseWriter, r *http.Request, v *view) {
	d, err := c.vaultData(r, v)
	if err != nil {
		c.failAPI(w, r, v, err)
		return
	}
	v.Nav, v.Title, v.Data = "vault", "Vault", d
	c.render(w, http.StatusOK, "vault", v)
}

// storeSecret seals a value under an alias; the value is never echoed,
// not even when the form comes back with an error.
func (c *Console) storeSecret(w http.ResponseWriter, r *http.Request, v *view) {
	alias := strings.TrimSpace(r.PostFormValue("alias"))
	body := map[string]string{"alias": alias, "value": r.PostFormValue("value"), "context": strings.TrimSpace(r.PostFormValue("context"))}
	err := c.rest(r.Context(), v.Me.OrgID, http.MethodPost, "/vault/secrets", body, nil)
	if err == nil {
		c.redirect(w, r, Base+"/vault", "Secret "+alias+" stored. Its value is sealed and will not be shown.")
		return
	}
	e, ok := err.(*apiError) //nolint:errorlint // unwrapped
	if !ok || e.Status >= 500 && e.Status != http.StatusServiceUnavailable {
		c.failAPI(w, r, v, err)
		return
	}
	d, _ := c.vaultData(r, v)
	d.Alias, d.Context = alias, body["context"]
	v.Nav, v.Title, v.Error, v.Data = "vault", "Vault", e.Text(), d
	c.render(w, e.Status, "vault", v)
}

func (c *Console) clusterPage(w http.ResponseWriter, r *http.Request, v *view) {
	v.Nav, v.Title, v.Data = "cluster", "Cluster", c.b.Cluster()
	c.render(w, http.StatusOK, "cluster", v)
}
