package vault

import (
	"bytes"
	"fmt"
)

// sealedKeyPrefix marks a service signing key SealKey sealed. A stored key
// without it was recorded in clear, before keys were sealed.
var sealedKeyPrefix = []byte("hebb-sealed-key-v1\x00")

// SealKey seals one of the service's own signing keys (the OAuth server's,
// the chat API's) before it is proposed to the meta group, so that no log
// or snapshot holds it in clear. purpose names the key and id is its id
// ("" when it has none); the additional data binds both, with an empty
// tenant, which no vault value has. A nil ring keeps the key in clear.
func (r *Ring) SealKey(value []byte, purpose, id string) ([]byte, error) {
	if r == nil {
		return value, nil
	}
	sealed, err := r.Seal(value, "", purpose, id)
	if err != nil {
		return nil, fmt.Errorf("cannot seal the %s: %w", purpose, err)
	}
	return append(bytes.Clone(sealedKeyPrefix), sealed...), nil
}

// OpenKey returns the key SealKey sealed; a key recorded in clear comes
// back as it is, and so does any key when the ring is nil.
func (r *Ring) OpenKey(stored []byte, purpose, id string) ([]byte, error) {
	sealed, ok := bytes.CutPrefix(stored, sealedKeyPrefix)
	if !ok || r == nil {
		return stored, nil
	}
	v, err := r.Open(sealed, "", purpose, id)
	if err != nil {
		return nil, fmt.Errorf("cannot open the %s (is the vault master key the one that sealed it?): %w", purpose, err)
	}
	return v, nil
}
