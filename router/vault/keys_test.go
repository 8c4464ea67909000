package vault

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"
)

func testRing(t *testing.T, b byte) *Ring {
	t.Helper()
	r, err := Parse(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSealKey(t *testing.T) {
	r := testRing(t, 1)
	key := bytes.Repeat([]byte{0x30, 0x82}, 40)
	sealed, err := r.SealKey(key, "oauth signing key", "k_1")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, key[:16]) {
		t.Fatal("the sealed key holds the key's bytes")
	}
	if got, err := r.OpenKey(sealed, "oauth signing key", "k_1"); err != nil || !bytes.Equal(got, key) {
		t.Fatalf("OpenKey = %x, %v", got, err)
	}
	// Bound to its purpose and id, and to the ring.
	for name, open := range map[string]func() ([]byte, error){
		"purpose": func() ([]byte, error) { return r.OpenKey(sealed, "chat signing key", "k_1") },
		"id":      func() ([]byte, error) { return r.OpenKey(sealed, "oauth signing key", "k_2") },
		"ring":    func() ([]byte, error) { return testRing(t, 2).OpenKey(sealed, "oauth signing key", "k_1") },
	} {
		if _, err := open(); !errors.Is(err, ErrCannotOpen) {
			t.Errorf("another %s opened the key: %v", name, err)
		}
	}
	// A nil ring keeps keys in clear and cannot open a sealed one.
	var none *Ring
	if got, err := none.SealKey(key, "oauth signing key", "k_1"); err != nil || !bytes.Equal(got, key) {
		t.Fatalf("nil ring SealKey = %x, %v", got, err)
	}
	if got, _ := none.OpenKey(sealed, "oauth signing key", "k_1"); bytes.Equal(got, key) {
		t.Fatal("a nil ring opened a sealed key")
	}
	// A key recorded in clear by an earlier version reads as it is.
	if got, err := r.OpenKey(key, "oauth signing key", "k_1"); err != nil || !bytes.Equal(got, key) {
		t.Fatalf("a clear key: %x, %v", got, err)
	}
}

// TestRefuseNewKeys: a ring that lacks the data dir's key makes no new
// signing key, and still opens what it sealed before.
func TestRefuseNewKeys(t *testing.T) {
	r := testRing(t, 1)
	sealed, err := r.SealKey([]byte("signing key bytes"), "chat signing key", "")
	if err != nil {
		t.Fatal(err)
	}
	r.RefuseNewKeys()
	if _, err := r.SealKey([]byte("another"), "chat signing key", ""); !errors.Is(err, ErrNewKeyRefused) {
		t.Fatalf("SealKey after RefuseNewKeys: %v", err)
	}
	if got, err := r.OpenKey(sealed, "chat signing key", ""); err != nil || string(got) != "signing key bytes" {
		t.Fatalf("OpenKey = %q, %v", got, err)
	}
	var none *Ring
	none.RefuseNewKeys() // nil-safe
}
