package console

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/hebbdb/hebb/cluster"
)

// NewUser is a person to create.
type NewUser struct {
	Email    string
	Password string // raw; hashed here
	OrgID    string // an existing org; empty: a new org named OrgName
	OrgName  string
	Role     string // owner (default) or member
	Operator bool
}

// Proposer replicates meta commands.
type Proposer interface {
	Meta() *cluster.Meta
	ProposeMeta(ctx context.Context, cmd []byte) (any, error)
}

// checkEmail returns the normalized address, or why it is not one.
func checkEmail(raw string) (string, string) {
	e := cluster.NormalizeEmail(raw)
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || len(e) > 254 || !strings.Contains(e, "@") {
		return "", "Enter an e-mail address like name@example.com."
	}
	return e, ""
}

// CreateUser creates a user (and its org when u.OrgID is empty) through
// the meta group. Errors: ErrInvalidUser (with the reason), ErrEmailTaken,
// ErrUnknownOrg.
func CreateUser(ctx context.Context, p Proposer, u NewUser) (cluster.ConsoleUser, error) {
	email, msg := checkEmail(u.Email)
	if msg == "" {
		msg = checkPassword(u.Password)
	}
	if u.Role == "" {
		u.Role = cluster.ConsoleRoleOwner
	}
	if msg == "" && u.Role != cluster.ConsoleRoleOwner && u.Role != cluster.ConsoleRoleMember {
		msg = "The role must be owner or member."
	}
	if msg != "" {
		return cluster.ConsoleUser{}, fmt.Errorf("%w: %s", ErrInvalidUser, msg)
	}
	hash, err := HashPassword(ctx, u.Password)
	if err != nil {
		return cluster.ConsoleUser{}, err
	}
	now := time.Now().UTC()
	cmd := cluster.ConsoleCreateUser{Now: now, User: cluster.ConsoleUser{ID: "usr_" + ulid.Make().String(),
		Email: email, PasswordHash: hash, Operator: u.Operator, CreatedAt: now}}
	org := u.OrgID
	if org == "" {
		org = cluster.NewOrgID()
		name := strings.TrimSpace(u.OrgName)
		if name == "" {
			name = email
		}
		cmd.NewOrg = &cluster.Org{ID: org, Name: name, CreatedAt: now}
	}
	cmd.User.Orgs = []cluster.ConsoleMembership{{OrgID: org, Role: u.Role}}
	out, err := p.ProposeMeta(ctx, cluster.EncodeConsoleCreateUser(cmd))
	if err != nil {
		return cluster.ConsoleUser{}, fmt.Errorf("cannot create user: %w", err)
	}
	if e, ok := out.(error); ok {
		switch {
		case errors.Is(e, cluster.ErrConsoleUserExists):
			return cluster.ConsoleUser{}, fmt.Errorf("%w: %s", ErrEmailTaken, email)
		case errors.Is(e, cluster.ErrUnknownOrg):
			return cluster.ConsoleUser{}, fmt.Errorf("%w: %s", ErrUnknownOrg, org)
		}
		return cluster.ConsoleUser{}, fmt.Errorf("cannot create user: %w", e)
	}
	user, _ := out.(cluster.ConsoleUser)
	waitLocal(ctx, func() bool { _, ok := p.Meta().ConsoleUser(user.ID); return ok })
	return user, nil
}

// SetPassword gives a user a new password (checked as at sign-up) and ends
// their sessions: the operator's way back in for a person who forgot it.
func SetPassword(ctx context.Context, p Proposer, userID, password string) (cluster.ConsoleUser, error) {
	if msg := checkPassword(password); msg != "" {
		return cluster.ConsoleUser{}, fmt.Errorf("%w: %s", ErrInvalidUser, msg)
	}
	hash, err := HashPassword(ctx, password)
	if err != nil {
		return cluster.ConsoleUser{}, err
	}
	out, err := p.ProposeMeta(ctx, cluster.EncodeConsoleSetPassword(cluster.ConsoleSetPassword{UserID: userID,
		PasswordHash: hash, Now: time.Now().UTC()}))
	if err != nil {
		return cluster.ConsoleUser{}, fmt.Errorf("cannot set password: %w", err)
	}
	if e, ok := out.(error); ok {
		return cluster.ConsoleUser{}, fmt.Errorf("cannot set password: %w", e)
	}
	u, _ := out.(cluster.ConsoleUser)
	return u, nil
}

// SetRole gives an existing user a role in an org ("" removes it).
func SetRole(ctx context.Context, p Proposer, userID, org, role string) (cluster.ConsoleUser, error) {
	out, err := p.ProposeMeta(ctx, cluster.EncodeConsoleSetRole(cluster.ConsoleSetRole{UserID: userID, OrgID: org,
		Role: role, Now: time.Now().UTC()}))
	if err != nil {
		return cluster.ConsoleUser{}, fmt.Errorf("cannot set role: %w", err)
	}
	if e, ok := out.(error); ok {
		if errors.Is(e, cluster.ErrUnknownOrg) {
			return cluster.ConsoleUser{}, fmt.Errorf("%w: %s", ErrUnknownOrg, org)
		}
		return cluster.ConsoleUser{}, fmt.Errorf("cannot set role: %w", e)
	}
	u, _ := out.(cluster.ConsoleUser)
	return u, nil
}
