package client

import (
	"context"
	"net/http"
)

// UserRequest makes a web console user (POST /admin/v1/users): in an
// existing org (OrgID), or in a new one named OrgName (neither: a new org
// named after the address). An existing user is added to OrgID with Role
// when Password is theirs; otherwise the answer is 409.
type UserRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"` // at least 10 characters
	OrgID    string `json:"org_id,omitempty"`
	OrgName  string `json:"org_name,omitempty"`
	Role     string `json:"role,omitempty"` // "owner" (default) or "member"
	Operator bool   `json:"operator,omitempty"`
}

// User is a console user's membership of the org the request named.
type User struct {
	UserID   string `json:"user_id"`
	Email    string `json:"email"`
	OrgID    string `json:"org_id"`
	Role     string `json:"role"`
	Operator bool   `json:"operator"`
}

// RemovedUser is the answer of a removal from an org.
type RemovedUser struct {
	UserID  string `json:"user_id"`
	OrgID   string `json:"org_id"`
	Removed bool   `json:"removed"`
}

// CreateUser makes a console user, or adds an existing one to an org.
func (a *AdminClient) CreateUser(ctx context.Context, req UserRequest) (*User, error) {
	var out User
	if err := a.c.do(ctx, &request{method: http.MethodPost, path: "/admin/v1/users", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveUser takes a person (user ID or e-mail address) out of an org at
// once, with their console sessions in it and the OAuth grants they made
// for it; ErrNotFound when they are not in it. It is not retried after a
// transport error (a lost answer of a removal that happened would turn the
// retry's into ErrNotFound): call it again, knowing that.
func (a *AdminClient) RemoveUser(ctx context.Context, user, orgID string) (*RemovedUser, error) {
	var out RemovedUser
	r := &request{method: http.MethodDelete, path: "/admin/v1/users/" + seg(user) + "/orgs/" + seg(orgID)}
	if err := a.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PasswordChanged is the answer of SetPassword.
type PasswordChanged struct {
	UserID          string `json:"user_id"`
	Email           string `json:"email"`
	PasswordChanged bool   `json:"password_changed"`
}

// SetPassword gives a console user (ID or e-mail address) a new password,
// at least 10 characters; every console session of theirs ends.
func (a *AdminClient) SetPassword(ctx context.Context, user, password string) (*PasswordChanged, error) {
	var out PasswordChanged
	r := &request{method: http.MethodPut, path: "/admin/v1/users/" + seg(user) + "/password",
		body: map[string]string{"password": password}, safe: true}
	if err := a.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
