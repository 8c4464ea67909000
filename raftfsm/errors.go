package raftfsm

import (
	"errors"
	"fmt"
)

// Sentinel errors of the state machine. Apply results carry an *ApplyError
// whose Kind is one of these, so callers can use errors.Is.
var (
	ErrNotFound  = errors.New("raftfsm: not found")
	ErrConflict  = errors.New("raftfsm: conflict")
	ErrForbidden = errors.New("raftfsm: forbidden")
	ErrSnapshot  = errors.New("raftfsm: bad snapshot")
	// ErrRestoreStopped ends a restore whose stop signal closed
	// (FSM.StopRestoresOn): the state is left as it was.
	ErrRestoreStopped = errors.New("raftfsm: restore stopped: the node is stopping")
	ErrLimit          = errors.New("raftfsm: atom limit reached")
	// ErrSecretTarget is the conflict of a supersede naming a secret: its
	// Target is the secret, not a successor.
	ErrSecretTarget = fmt.Errorf("%w: the target is a secret", ErrConflict)
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

var kindNames = map[error]string{ErrNotFound: "not_found", ErrConflict: "conflict",
	ErrForbidden: "forbidden", ErrSnapshot: "snapshot", ErrLimit: "limit", ErrSecretTarget: "secret_target"}

// GobEncode lets an apply result cross the node transport: Kind travels by
// name and comes back as the same sentinel.
func (e *ApplyError) GobEncode() ([]byte, error) {
	x := enc{}
	x.str(kindNames[e.Kind])
	x.str(e.Message)
	x.id(e.Target)
	return x.b, nil
}

// GobDecode is the inverse of GobEncode.
func (e *ApplyError) GobDecode(b []byte) error {
	d := &dec{b: b}
	name := d.str()
	e.Message = d.str()
	e.Target = d.id()
	for k, n := range kindNames {
		if n == name {
			e.Kind = k
		}
	}
	return d.err
}
