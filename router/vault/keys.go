package vault

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrNewKeyRefused is SealKey's answer on a ring that RefuseNewKeys marked.
var ErrNewKeyRefused = errors.New("vault: this node's vault key is not the data dir's: no new signing key is sealed with it")

// RefuseNewKeys makes SealKey refuse: the ring lacks the key the data dir's
// signing keys are sealed with (HEBB_VAULT_KEY without the key file's key,
// or a key drawn afresh where one existed). A signing key made the first
// time it was needed was sealed with the wrong key, and every later start
// with the right one answered 500 for good.
func (r *Ring) RefuseNewKeys() {
	if r != nil {
		r.refuseNew = true
	}
}

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
	if r.refuseNew {
		return nil, fmt.Errorf("cannot seal the %s: %w", purpose, ErrNewKeyRefused)
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
