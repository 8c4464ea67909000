package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// assetVersion maps a static file to a short hash of its content, so its
// URL changes when it does and it can be cached for long.
var assetVersion = func() map[string]string {
	out := map[string]string{}
	_ = fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := staticFS.ReadFile(p)
		sum := sha256.Sum256(b)
		out[path.Base(p)] = hex.EncodeToString(sum[:4])
		return nil
	})
	return out
}()

func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix(Base+"/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(w, r)
	})
}

// pages holds one parsed template set per page.
type pages struct {
	byName map[string]*template.Template
}

var funcs = template.FuncMap{
	"asset":    func(name string) string { return Base + "/static/" + name + "?v=" + assetVersion[name] },
	"icon":     icon,
	"ago":      func(t any) string { return ago(timeOf(t)) },
	"when":     func(t any) string { return timeOf(t).UTC().Format("2 Jan 2006, 15:04 UTC") },
	"date":     func(t any) string { return timeOf(t).UTC().Format("2006-01-02") },
	"iso":      func(t any) string { return timeOf(t).UTC().Format(time.RFC3339) },
	"deref":    func(f *float64) float64 { return *f },
	"derefInt": func(n *int) int { return *n },
	"pct":      pct,
	"num":      num,
	"float":    func(f float64) string { return fmt.Sprintf("%.2f", f) },
	"json":     prettyJSON,
	"short": func(s string) string {
		if len(s) > 13 {
			return s[:8] + "…"
		}
		return s
	},
	"isRoom": func(d string) bool { return strings.HasPrefix(d, "xroom:") },
	"path":   func(parts ...string) string { return Base + strings.Join(parts, "") },
}

func loadPages() (*pages, error) {
	base, err := template.New("base").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("cannot parse the console layout: %w", err)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, fmt.Errorf("cannot parse console page %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// render writes page name with v; the page's template picks the layout
// ("page" for the app shell, "bare" for the sign-in screens).
func (c *Console) render(w http.ResponseWriter, status int, name string, v *view) {
	t, ok := c.pages.byName[name]
	if !ok {
		c.log.Error("console: no such page template", "page", name)
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "root", v); err != nil {
		c.log.Error("console: cannot render page", "page", name, "err", err)
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail shows an error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, v *view, status int, msg string) {
	v.Title, v.Error = http.StatusText(status), msg
	if r.Header.Get("X-Requested-With") == "fetch" {
		http.Error(w, msg, status)
		return
	}
	c.render(w, status, "error", v)
}

// Page renders body inside the console's layout, for pages of other
// surfaces (the OAuth consent page) that should look like the console.
// r's session, if any, shows in the header.
func (c *Console) Page(w http.ResponseWriter, r *http.Request, status int, title string, body template.HTML) {
	v := &view{Title: title, Data: body}
	if id, tok, ok := c.session(r); ok {
		v.Me, v.token, v.CSRF = &id, tok, csrfOf(tok)
	}
	c.render(w, status, "embed", v)
}

// timeOf accepts a time or a pointer to one (nil: the zero time).
func timeOf(v any) time.Time {
	switch t := v.(type) {
	case time.Time:
		return t
	case *time.Time:
		if t != nil {
			return *t
		}
	}
	return time.Time{}
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t)
	switch {
	case d < 0:
		return "in " + span(-d)
	case d < time.Minute:
		return "just now"
	}
	return span(d) + " ago"
}

func span(d time.Duration) string {
	switch {
	case d < time.Hour:
		return plural(int(d.Minutes()), "minute")
	case d < 48*time.Hour:
		return plural(int(math.Round(d.Hours())), "hour")
	}
	return plural(int(math.Round(d.Hours()/24)), "day")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// pct is used/limit as a whole percentage for a meter (0 when unlimited).
func pct(used, limit int64) int {
	if limit <= 0 {
		return 0
	}
	return int(math.Min(100, math.Round(float64(used)*100/float64(limit))))
}

// num formats n with thin separators.
func num(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteRune(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func prettyJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return ""
	}
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}
