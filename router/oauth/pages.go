package oauth

import (
	"html/template"
	"net/http"
)

// scopeText says what each scope lets a client do, on the consent page.
var scopeText = map[string]string{
	ScopeOpenID:        "Confirm which hebb account you are",
	ScopeProfile:       "See your account name",
	ScopeEmail:         "See your e-mail address, if the account has one",
	ScopeMemoryRead:    "Search and read your memories, your rooms and the aliases of your vault secrets",
	ScopeMemoryWrite:   "Store memories, give feedback, and create, share and join rooms",
	ScopeOfflineAccess: "Stay connected without signing in again",
}

const pageHead = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Title}} · hebb</title>
<style>body{font-family:system-ui,sans-serif;max-width:30rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}label{display:block;margin:1rem 0 .3rem}input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
button{padding:.5rem 1.2rem;margin:1rem .5rem 0 0}.err{color:#a00}.muted{color:#666;font-size:.9rem}li{margin:.3rem 0}</style>
</head><body>`

var signInPage = template.Must(template.New("signin").Parse(pageHead + `
<h1>Sign in to hebb</h1>
<p><strong>{{.Client}}</strong> wants to connect to your hebb memory.</p>
{{if .Error}}<p class="err" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="authorize">
{{range $k, $v := .Hidden}}<input type="hidden" name="{{$k}}" value="{{$v}}">{{end}}
<input type="hidden" name="step" value="signin">
<label for="api_key">Your API key</label>
<input type="password" id="api_key" name="api_key" autocomplete="current-password" placeholder="mk_live_…" required autofocus>
<p class="muted">The key stays on this server; the client gets a token of its own that you can revoke.</p>
<button type="submit">Sign in</button>
</form></body></html>`))

var consentPage = template.Must(template.New("consent").Parse(pageHead + `
<h1>Allow {{.Client}}?</h1>
<p>Signed in as <strong>{{.Account}}</strong>. <strong>{{.Client}}</strong> asks to:</p>
<ul>{{range .Scopes}}<li>{{.}}</li>{{end}}</ul>
<p class="muted">It will be redirected to {{.Redirect}}.</p>
<form method="post" action="authorize">
<input type="hidden" name="step" value="consent">
<input type="hidden" name="ticket" value="{{.Ticket}}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form></body></html>`))

var errorPage = template.Must(template.New("error").Parse(pageHead + `
<h1>Cannot authorize</h1><p class="err">{{.Error}}</p>
<p class="muted">Start the connection again from your client.</p></body></html>`))

type pageData struct {
	Title    string
	Client   string
	Account  string
	Error    string
	Redirect string
	Ticket   string
	Hidden   map[string]string
	Scopes   []string
}

// render writes a page with headers that keep it out of frames and caches.
func (s *Server) render(w http.ResponseWriter, status int, t *template.Template, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := t.Execute(w, d); err != nil {
		s.log.Warn("oauth page", "err", err)
	}
}

func (s *Server) errorPage(w http.ResponseWriter, status int, msg string) {
	s.render(w, status, errorPage, pageData{Title: "Error", Error: msg})
}
