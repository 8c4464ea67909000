package console

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/ratelimit"
)

// authForm is the data of the sign-in and sign-up pages.
type authForm struct {
	Email   string
	OrgName string
	Next    string
}

// KeyFallback is where a person coming from the tool connector's
// authorization can sign in with an API key instead ("" otherwise).
func (f authForm) KeyFallback() string {
	if !strings.HasPrefix(f.Next, "/oauth/authorize?") {
		return ""
	}
	return f.Next + "&signin=key"
}

// Sign-in rate limits: failures allowed per window, on each node (package
// ratelimit): per e-mail address from one client address, per client
// address, and per e-mail address from all addresses together. The first
// counts per address so that anyone who knows a person's e-mail address
// cannot lock them out with five wrong passwords; the last still bounds
// the guesses spread over many addresses.
const (
	limitWindow     = 15 * time.Minute
	maxEmailFails   = 5
	maxAddressFails = 30
	maxSignUps      = 10 // per client address and window
	maxInvitations  = 20 // e-mail invitations per inviter, and per recipient, and window
	limiterMaxKeys  = 100_000
)

// maxAccountFails is the failures allowed per e-mail address from all
// client addresses together (a variable so tests can lower it).
var maxAccountFails = 50

func (c *Console) signInPage(w http.ResponseWriter, r *http.Request, v *view) {
	next := safeNext(r.URL.Query().Get("next"))
	if v.Me != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	v.Title, v.Data = "Sign in", authForm{Next: next, Email: r.URL.Query().Get("email")}
	c.render(w, http.StatusOK, "signin", v)
}

// signIn checks the password, within the rate limits, and starts a new
// session. Each attempt is counted against the limits before its password
// is checked, and given back when it succeeds: counted after the check,
// parallel attempts all passed a check that none had been counted in yet
// (100 at once from one address against its limit of 30).
func (c *Console) signIn(w http.ResponseWriter, r *http.Request, v *view) {
	form := authForm{Email: strings.TrimSpace(r.PostFormValue("email")), Next: safeNext(r.PostFormValue("next"))}
	v.Title, v.Data = "Sign in", form
	email, addr := cluster.NormalizeEmail(form.Email), ratelimit.ClientAddr(r)
	emailKey, accountKey, addrKey := "e:"+email+"\x00"+addr, "E:"+email, "a:"+addr
	if ok, wait := c.limits.TakeAll(ratelimit.Limit{Key: emailKey, Max: maxEmailFails},
		ratelimit.Limit{Key: addrKey, Max: maxAddressFails}, ratelimit.Limit{Key: accountKey, Max: maxAccountFails}); !ok {
		v.Error = fmt.Sprintf("Too many failed sign-ins. Try again in %s.", span(wait+time.Minute))
		c.render(w, http.StatusTooManyRequests, "signin", v)
		return
	}
	giveBack := func() {
		for _, k := range []string{emailKey, accountKey, addrKey} {
			c.limits.Return(k)
		}
	}
	var u cluster.ConsoleUser
	var found bool
	meta := c.b.Meta()
	meta.Synced(r.Context(), func() bool { u, found = meta.ConsoleUserByEmail(form.Email); return found })
	hash := dummyHash()
	if found {
		hash = u.PasswordHash
	}
	ok, err := VerifyPassword(r.Context(), hash, r.PostFormValue("password"))
	if errors.Is(err, ErrBusy) || r.Context().Err() != nil {
		giveBack() // not an attempt: the password was never checked
		c.fail(w, r, v, http.StatusServiceUnavailable, "Too many sign-ins at once; try again in a moment.")
		return
	}
	if err != nil {
		c.log.Error("console: stored password hash unreadable", "user", u.ID, "err", err)
	}
	if !found || !ok {
		v.Error = "That e-mail address and password do not match."
		c.render(w, http.StatusUnauthorized, "signin", v)
		return
	}
	giveBack() // the password is right: not a failed attempt
	if len(u.Orgs) == 0 {
		// Told apart only after the password matched: a person removed from
		// their last workspace was told their password was wrong, and each
		// try counted towards the lockout.
		v.Error = "This account belongs to no workspace any more: ask a workspace owner or the operator to add you."
		c.render(w, http.StatusForbidden, "signin", v)
		return
	}
	c.limits.Reset(emailKey)
	if err := c.startSession(r.Context(), w, r, u.ID, u.Orgs[0].OrgID); err != nil {
		c.log.Error("console: cannot start session", "err", err)
		c.fail(w, r, v, http.StatusServiceUnavailable, "The service is unavailable; try again in a moment.")
		return
	}
	http.Redirect(w, r, form.Next, http.StatusSeeOther)
}

func (c *Console) signUpPage(w http.ResponseWriter, r *http.Request, v *view) {
	next := safeNext(r.URL.Query().Get("next"))
	if v.Me != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	v.Title, v.Data = "Create your account", authForm{Next: next, Email: r.URL.Query().Get("email")}
	c.render(w, http.StatusOK, "signup", v)
}

// signUp creates a user who owns a new org, and signs them in.
func (c *Console) signUp(w http.ResponseWriter, r *http.Request, v *view) {
	form := authForm{Email: strings.TrimSpace(r.PostFormValue("email")), OrgName: strings.TrimSpace(r.PostFormValue("org_name")),
		Next: safeNext(r.PostFormValue("next"))}
	v.Title, v.Data = "Create your account", form
	// Counted before the address is looked up or the password hashed,
	// given back when the form was refused (parallel sign-ups all passed a
	// check made before any was counted: 30 from one address against its
	// limit of 10).
	addrKey := "s:" + ratelimit.ClientAddr(r)
	if ok, wait := c.limits.Take(addrKey, maxSignUps); !ok {
		v.Error = fmt.Sprintf("Too many accounts created from here. Try again in %s.", span(wait+time.Minute))
		c.render(w, http.StatusTooManyRequests, "signup", v)
		return
	}
	counted := false
	defer func() {
		if !counted {
			c.limits.Return(addrKey)
		}
	}()
	if problem := nameProblem(form.OrgName, "workspace name", 200); problem != "" {
		v.Error = problem
		c.render(w, http.StatusBadRequest, "signup", v)
		return
	}
	if pw := r.PostFormValue("password"); pw != r.PostFormValue("password2") {
		v.Error = "The two passwords differ."
		c.render(w, http.StatusBadRequest, "signup", v)
		return
	}
	// A taken address answers before the password is hashed (an argon2id
	// hash of 19 MiB for every probe), and counts against the address's
	// sign-ups: the form tells which addresses have accounts, so it may
	// not be asked without limit.
	var u cluster.ConsoleUser
	var err error
	if _, taken := c.b.Meta().ConsoleUserByEmail(form.Email); taken {
		err = ErrEmailTaken
	} else {
		u, err = CreateUser(r.Context(), c.b, NewUser{Email: form.Email, Password: r.PostFormValue("password"), OrgName: form.OrgName})
	}
	switch {
	case errors.Is(err, ErrInvalidUser):
		v.Error = strings.TrimPrefix(err.Error(), ErrInvalidUser.Error()+": ")
		c.render(w, http.StatusBadRequest, "signup", v)
		return
	case errors.Is(err, ErrEmailTaken):
		counted = true
		v.Error = "An account with this e-mail address exists. Sign in instead."
		c.render(w, http.StatusConflict, "signup", v)
		return
	case errors.Is(err, ErrBusy):
		c.fail(w, r, v, http.StatusServiceUnavailable, "Too many sign-ups at once; try again in a moment.")
		return
	case err != nil:
		c.log.Error("console: sign-up failed", "err", err)
		c.fail(w, r, v, http.StatusServiceUnavailable, "The service is unavailable; try again in a moment.")
		return
	}
	counted = true
	if err := c.startSession(r.Context(), w, r, u.ID, u.Orgs[0].OrgID); err != nil {
		c.log.Error("console: cannot start session", "err", err)
		c.fail(w, r, v, http.StatusServiceUnavailable, "The service is unavailable; try again in a moment.")
		return
	}
	c.flash(w, "Welcome to hebb. Create an API key to connect your first agent.")
	http.Redirect(w, r, form.Next, http.StatusSeeOther)
}

func (c *Console) signOut(w http.ResponseWriter, r *http.Request, v *view) {
	_, err := c.metaResult(r.Context(), cluster.EncodeConsoleSignOut(cluster.ConsoleSignOut{Hash: hashToken(v.token),
		Now: time.Now().UTC()}))
	if err != nil {
		c.log.Warn("console: sign-out not recorded", "err", err)
	}
	c.clearSession(w)
	c.redirect(w, r, Base+"/signin", "You are signed out.")
}

// switchOrg starts a session in another org of the user.
func (c *Console) switchOrg(w http.ResponseWriter, r *http.Request, v *view) {
	org := r.PostFormValue("org_id")
	ok := false
	for _, o := range v.Me.Orgs {
		ok = ok || o.ID == org
	}
	if !ok {
		c.fail(w, r, v, http.StatusNotFound, "You are not a member of that workspace.")
		return
	}
	if err := c.startSession(r.Context(), w, r, v.Me.UserID, org); err != nil {
		c.log.Error("console: cannot switch org", "err", err)
		c.fail(w, r, v, http.StatusServiceUnavailable, "The service is unavailable; try again in a moment.")
		return
	}
	c.redirect(w, r, Base, "")
}
