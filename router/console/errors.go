package console

import "errors"

// Sentinel errors.
var (
	// ErrEmailTaken is a sign-up or user creation with an address in use.
	ErrEmailTaken = errors.New("console: e-mail address already registered")
	// ErrInvalidUser is a user whose e-mail address or password is not
	// acceptable.
	ErrInvalidUser = errors.New("console: invalid user")
	// ErrUnknownOrg is a user created in an org that does not exist.
	ErrUnknownOrg = errors.New("console: unknown org")
	// ErrMailOff means no SMTP server is configured.
	ErrMailOff = errors.New("console: e-mail is not configured")
	// ErrBusy: too many password checks wait already (hashSlots); try
	// again in a moment.
	ErrBusy = errors.New("console: too many password checks at once")
	// ErrBadPasswordHash is a stored hash this package cannot read.
	ErrBadPasswordHash = errors.New("console: unreadable password hash")
)
