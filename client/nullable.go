package client

import (
	"bytes"
	"encoding/json"
)

// Nullable is a field with three states: omitted (the zero value), an
// explicit JSON null (Null), and a value (Some). It is used where the API
// gives null a meaning of its own, such as clearing a membership's expiry.
// Tag such fields `json:"name,omitzero"` so the omitted state is not sent.
type Nullable[T any] struct {
	set   bool
	null  bool
	value T
}

// Some is a Nullable holding v.
func Some[T any](v T) Nullable[T] { return Nullable[T]{set: true, value: v} }

// Null is a Nullable holding an explicit null.
func Null[T any]() Nullable[T] { return Nullable[T]{set: true, null: true} }

// IsZero reports the omitted state (used by omitzero).
func (n Nullable[T]) IsZero() bool { return !n.set }

// IsNull reports an explicit null.
func (n Nullable[T]) IsNull() bool { return n.set && n.null }

// Get returns the value and whether there is one (false when omitted or null).
func (n Nullable[T]) Get() (T, bool) { return n.value, n.set && !n.null }

// MarshalJSON writes null or the value. An omitted Nullable also writes
// null; tag the field omitzero to leave it out.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.set || n.null {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

// UnmarshalJSON records a present field: null, or a value.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*n = Null[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Some(v)
	return nil
}

// Ptr returns a pointer to v, for the optional pointer fields of requests:
// client.ReadRequest{Query: "q", TopK: client.Ptr(5)}.
func Ptr[T any](v T) *T { return &v }
