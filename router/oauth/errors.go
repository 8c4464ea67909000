package oauth

import "errors"

// ErrInvalidToken is an access token that is unknown, expired, revoked or
// minted for another resource.
var ErrInvalidToken = errors.New("oauth: invalid access token")

// oauthError is an error response of the OAuth endpoints (RFC 6749 §5.2).
type oauthError struct {
	Status      int    `json:"-"`
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

func errorf(status int, code, desc string) *oauthError {
	return &oauthError{Status: status, Code: code, Description: desc}
}
