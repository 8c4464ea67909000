package raftfsm

import "errors"

// Sentinel errors of the state machine. Apply results carry an *ApplyError
// whose Kind is one of these, so callers can use errors.Is.
var (
	ErrNotFound  = errors.New("raftfsm: not found")
	ErrConflict  = errors.New("raftfsm: conflict")
	ErrForbidden = errors.New("raftfsm: forbidden")
	ErrSnapshot  = errors.New("raftfsm: bad snapshot")
)

// ApplyError is an expected failure of a command, returned in the apply
// result (never a panic). Target names the atom the failure is about.
type ApplyError struct {
	Kind    error
	Message string
	Target  ID
}

func (e *ApplyError) Error() string { return e.Message }

// Unwrap lets errors.Is match the Kind sentinel.
func (e *ApplyError) Unwrap() error { return e.Kind }
