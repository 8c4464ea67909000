package oauth

import (
	"bytes"
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

// The page bodies use the class names of the web console's stylesheet;
// Config.Render puts them in its layout. Without it, standalonePage wraps
// them with a few inline rules of its own.

var signInBody = template.Must(template.New("signin").Parse(`
<h1>Sign in to hebb</h1>
<p><strong>{{.Client}}</strong> wants to connect to your hebb memory.</p>
{{if .Error}}<div class="notice err" role="alert"><span>{{.Error}}</span></div>{{end}}
{{if .SignInURL}}<p><a class="btn primary wide" href="{{.SignInURL}}">Sign in with e-mail and password</a></p>
<details class="advanced"{{if .Error}} open{{end}}>
<summary>Use an API key instead</summary>
<p class="muted">For an account that has no console sign-in.</p>{{end}}
<form method="post" action="authorize" class="stack">
{{range $k, $v := .Hidden}}<input type="hidden" name="{{$k}}" value="{{$v}}">
{{end}}<input type="hidden" name="step" value="signin">
<label for="api_key">Your API key</label>
<input type="password" id="api_key" name="api_key" autocomplete="current-password" placeholder="mk_live_…" required{{if not .SignInURL}} autofocus{{end}}>
<p class="muted">The key stays on this server; the client gets a token of its own that you can revoke.</p>
<button class="btn{{if .SignInURL}} ghost{{else}} primary{{end}}" type="submit">Sign in with the key</button>
</form>{{if .SignInURL}}
</details>{{end}}`))

var consentBody = template.Must(template.New("consent").Parse(`
<h1>Allow {{.Client}}?</h1>
{{if .Person}}<p>Signed in as <strong>{{.Person}}</strong>, for the workspace <strong>{{.Account}}</strong>.</p>
{{else}}<p>Signed in to <strong>{{.Account}}</strong> with its API key.</p>
{{end}}<p><strong>{{.Client}}</strong> asks to:</p>
<ul class="scopes">{{range .Scopes}}<li>{{.}}</li>{{end}}</ul>
<p class="muted">Approving sends you back to {{.Redirect}}. The client gets a token of its own, which you can revoke.</p>
<form method="post" action="authorize" class="row">
<input type="hidden" name="step" value="consent">
<input type="hidden" name="ticket" value="{{.Ticket}}">
<button class="btn ghost" type="submit" name="decision" value="deny">Deny</button>
<button class="btn primary" type="submit" name="decision" value="allow" autofocus>Approve</button>
</form>
{{if .Person}}<p class="muted small">To connect another workspace, switch to it in the console and start again.
Or <a href="{{.KeyURL}}">sign in with an API key instead</a>.</p>{{end}}`))

var errorBody = template.Must(template.New("error").Parse(`
<h1>Cannot authorize</h1>
<div class="notice err" role="alert"><span>{{.Error}}</span></div>
<p class="muted">Start the connection again from your client.</p>`))

var standalonePage = template.Must(template.New("page").Parse(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Title}} · hebb</title>
<style>body{font-family:system-ui,sans-serif;max-width:30rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}label{display:block;margin:1rem 0 .3rem}input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
.btn{display:inline-block;padding:.5rem 1.2rem;margin:1rem .5rem 0 0}.notice.err{color:#a00}.muted{color:#666;font-size:.9rem}
li{margin:.3rem 0}summary{cursor:pointer;margin-top:1rem}</style>
</head><body>{{.Body}}</body></html>`))

type pageData struct {
	Client    string
	Account   string // the org the tokens resolve to
	Person    string // who signed in with a session ("" with an API key)
	Error     string
	Redirect  string
	Ticket    string
	SignInURL string // the session sign-in, on the API-key page ("" when there is none)
	KeyURL    string // this request's API-key sign-in page
	Hidden    map[string]string
	Scopes    []string
}

// Content security policies: the host's layout loads its own scripts and
// styles; the standalone page has inline styles only. Neither restricts
// form-action, since the consent form's answer redirects to the client.
const (
	hostCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
	standaloneCSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
)

// render writes a page, in the host's layout when there is one, with
// headers that keep it out of frames and caches.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, title string, t *template.Template, d pageData) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		s.log.Error("oauth page", "page", t.Name(), "err", err)
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return
	}
	body := template.HTML(buf.String()) // escaped by html/template above
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if s.cfg.Render != nil {
		h.Set("Content-Security-Policy", hostCSP)
		s.cfg.Render(w, r, status, title, body)
		return
	}
	h.Set("Content-Security-Policy", standaloneCSP)
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := standalonePage.Execute(w, map[string]any{"Title": title, "Body": body}); err != nil {
		s.log.Warn("oauth page", "err", err)
	}
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "Cannot authorize", errorBody, pageData{Error: msg})
}
