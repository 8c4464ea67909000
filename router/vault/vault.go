package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hebbdb/hebb/shard"
)

// Errors of the key ring.
var (
	ErrBadKey     = errors.New("vault: bad master key")
	ErrCannotOpen = errors.New("vault: cannot open sealed value")
)

// KeyFile is the file created in the data dir when HEBB_VAULT_KEY is unset.
const KeyFile = "vault.key"

type key struct {
	id   string
	aead cipher.AEAD
	sum  [32]byte // SHA-256 of the key bytes: tells two rings' keys apart
}

// Ring is the master key ring.
type Ring struct {
	keys []key
	// refuseNew: this ring is not the one the data dir's signing keys
	// were (or will be) sealed with elsewhere (RefuseNewKeys).
	refuseNew bool
}

// Parse reads a key ring: base64 of 32 bytes, or "id:base64,id:base64,...".
func Parse(spec string) (*Ring, error) {
	r := &Ring{}
	for i, part := range strings.Split(strings.TrimSpace(spec), ",") {
		part = strings.TrimSpace(part)
		id, b64, ok := strings.Cut(part, ":")
		if !ok {
			id, b64 = fmt.Sprintf("k%d", i), part
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(raw) != 32 || id == "" || len(id) > 64 {
			return nil, fmt.Errorf("%w: key %d must be base64 of 32 bytes", ErrBadKey, i+1)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
		}
		r.keys = append(r.keys, key{id: id, aead: aead, sum: sha256.Sum256(raw)})
	}
	return r, nil
}

// Holds reports whether every key of o is in r (whatever id it goes by).
func (r *Ring) Holds(o *Ring) bool {
	for _, k := range o.keys {
		if !r.has(k.sum) {
			return false
		}
	}
	return true
}

func (r *Ring) has(sum [32]byte) bool {
	for _, k := range r.keys {
		if k.sum == sum {
			return true
		}
	}
	return false
}

// FileRing returns the ring of the data dir's key file, nil when there is
// none.
func FileRing(dataDir string) (*Ring, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, KeyFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the vault key file: %w", err)
	}
	r, err := Parse(string(b))
	if err != nil {
		// Name the file: the same words come from a bad HEBB_VAULT_KEY.
		return nil, fmt.Errorf("%s: %w (restore the file from a backup, or set HEBB_VAULT_KEY)",
			filepath.Join(dataDir, KeyFile), err)
	}
	return r, nil
}

// Load returns the ring from env (HEBB_VAULT_KEY) when set, else from the
// data dir's key file, creating it with mode 0600 on first use; created
// reports that it drew a new key.
func Load(env, dataDir string) (r *Ring, created bool, err error) {
	if env != "" {
		r, err = Parse(env)
		return r, false, err
	}
	// Never draw a key over one that could not be read.
	if r, err = FileRing(dataDir); r != nil || err != nil {
		return r, false, err
	}
	path := filepath.Join(dataDir, KeyFile)
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, false, fmt.Errorf("cannot draw vault key: %w", err)
	}
	spec := "k1:" + base64.StdEncoding.EncodeToString(raw)
	if err := shard.WriteFileSynced(path, []byte(spec+"\n"), 0o600); err != nil {
		return nil, false, fmt.Errorf("cannot write vault key file: %w", err)
	}
	r, err = Parse(spec)
	return r, true, err
}

func aad(tenant, alias, atomID string) []byte {
	return []byte("hebb-vault-v1\x00" + tenant + "\x00" + alias + "\x00" + atomID)
}

// Seal encrypts value for (tenant, alias, atomID) under the first key.
// Layout: len(id) | id | nonce | ciphertext.
func (r *Ring) Seal(value []byte, tenant, alias, atomID string) ([]byte, error) {
	k := r.keys[0]
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("cannot draw nonce: %w", err)
	}
	out := append([]byte{byte(len(k.id))}, k.id...)
	out = append(out, nonce...)
	return k.aead.Seal(out, nonce, value, aad(tenant, alias, atomID)), nil
}

// Open decrypts a sealed value with whichever ring key sealed it. The id
// the value carries names the key that sealed it, but the same 32 bytes can
// go by another id later (the key file names its key k1, a bare
// HEBB_VAULT_KEY k0, an operator's ring any name), so the keys of that id are
// tried first and then every other. The id vouches for nothing (it is not
// in the additional data): GCM's tag is what refuses a key that did not seal
// the value.
func (r *Ring) Open(sealed []byte, tenant, alias, atomID string) ([]byte, error) {
	if len(sealed) < 1 || len(sealed) < 1+int(sealed[0]) {
		return nil, ErrCannotOpen
	}
	id := string(sealed[1 : 1+sealed[0]])
	rest := sealed[1+sealed[0]:]
	ad := aad(tenant, alias, atomID)
	for _, named := range []bool{true, false} {
		for _, k := range r.keys {
			if (k.id == id) != named {
				continue
			}
			if v, ok := k.open(rest, ad); ok {
				return v, nil
			}
		}
	}
	return nil, ErrCannotOpen
}

// open decrypts nonce | ciphertext; false when this key did not seal it.
func (k key) open(rest, ad []byte) ([]byte, bool) {
	n := k.aead.NonceSize()
	if len(rest) < n {
		return nil, false
	}
	v, err := k.aead.Open(nil, rest[:n], rest[n:], ad)
	return v, err == nil
}
