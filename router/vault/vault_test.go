package vault

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testKey(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

func TestSealOpenRoundTrip(t *testing.T) {
	r, err := Parse(testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := r.Seal([]byte("hunter2"), "org_a", "db", "id1")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("hunter2")) {
		t.Fatal("sealed value holds the clear text")
	}
	got, err := r.Open(sealed, "org_a", "db", "id1")
	if err != nil || string(got) != "hunter2" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	for _, c := range [][3]string{{"org_b", "db", "id1"}, {"org_a", "db2", "id1"}, {"org_a", "db", "id2"}} {
		if _, err := r.Open(sealed, c[0], c[1], c[2]); !errors.Is(err, ErrCannotOpen) {
			t.Errorf("Open with other binding %v: err = %v, want ErrCannotOpen", c, err)
		}
	}
	again, _ := r.Seal([]byte("hunter2"), "org_a", "db", "id1")
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals of one value are identical: nonce reused")
	}
}

func TestRotation(t *testing.T) {
	old, _ := Parse("a:" + testKey(1))
	sealed, _ := old.Seal([]byte("v"), "t", "x", "i")
	ring, err := Parse("b:" + testKey(2) + ",a:" + testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ring.Open(sealed, "t", "x", "i"); err != nil || string(got) != "v" {
		t.Fatalf("old value after rotation: %q, %v", got, err)
	}
	fresh, _ := ring.Seal([]byte("w"), "t", "x", "i")
	if _, err := old.Open(fresh, "t", "x", "i"); err == nil {
		t.Fatal("new value opened with the old ring only: the first key did not seal")
	}
}

func TestParseRejects(t *testing.T) {
	for _, spec := range []string{"", "short", "a:" + base64.StdEncoding.EncodeToString([]byte("16 bytes only!!!")), "a:!!!"} {
		if _, err := Parse(spec); !errors.Is(err, ErrBadKey) {
			t.Errorf("Parse(%q) err = %v, want ErrBadKey", spec, err)
		}
	}
}

func TestLoadCreatesKeyFile(t *testing.T) {
	dir := t.TempDir()
	r1, created, err := Load("", dir)
	if err != nil || !created {
		t.Fatalf("first Load: created %v, %v", created, err)
	}
	st, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v", err, st.Mode())
	}
	sealed, _ := r1.Seal([]byte("v"), "t", "a", "i")
	r2, created, err := Load("", dir)
	if err != nil || created {
		t.Fatalf("second Load: created %v, %v", created, err)
	}
	if _, err := r2.Open(sealed, "t", "a", "i"); err != nil {
		t.Fatalf("reloaded ring cannot open: %v", err)
	}
}

// A key file that exists but cannot be read is an error: a new key drawn
// over it would lose what the old one sealed.
func TestLoadUnreadableKeyFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, KeyFile), 0o700); err != nil { // reads fail: a directory
		t.Fatal(err)
	}
	if _, created, err := Load("", dir); err == nil || created {
		t.Fatalf("Load over an unreadable key file: created %v, %v", created, err)
	}
	if st, err := os.Stat(filepath.Join(dir, KeyFile)); err != nil || !st.IsDir() {
		t.Fatalf("the unreadable key file was replaced: %v", err)
	}
}

// A key file that does not parse (truncated) is refused naming the file.
func TestLoadDamagedKeyFile(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Load("", dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, created, err := Load("", dir); err == nil || created || !strings.Contains(err.Error(), path) {
		t.Fatalf("Load of a truncated key file: created %v, %v", created, err)
	}
}

// A key opens what it sealed whatever id it goes by: a key ring names a key
// by the id it is given, and the same 32 bytes come with several (k1 in the
// key file, k0 bare in HEBB_VAULT_KEY, any name in an operator's ring).
func TestOpenWhateverTheKeyIsCalled(t *testing.T) {
	for _, c := range []struct {
		name, seal, open string
		opens            bool
	}{
		{"key file's key given bare", "k1:" + testKey(1), testKey(1), true},
		{"bare key written as the key file", testKey(1), "k1:" + testKey(1), true},
		{"renamed in a rotated ring", "a:" + testKey(1), "b:" + testKey(2) + ",c:" + testKey(1), true},
		{"its id taken by a new key", testKey(1), "k0:" + testKey(2) + ",old:" + testKey(1), true},
		{"no key of the ring sealed it", "k1:" + testKey(1), "k1:" + testKey(2) + ",k0:" + testKey(3), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sealer, err := Parse(c.seal)
			if err != nil {
				t.Fatal(err)
			}
			opener, err := Parse(c.open)
			if err != nil {
				t.Fatal(err)
			}
			sealed, err := sealer.Seal([]byte("v"), "t", "a", "i")
			if err != nil {
				t.Fatal(err)
			}
			got, err := opener.Open(sealed, "t", "a", "i")
			switch {
			case c.opens && (err != nil || string(got) != "v"):
				t.Fatalf("Open = %q, %v; want the value", got, err)
			case !c.opens && !errors.Is(err, ErrCannotOpen):
				t.Fatalf("Open = %q, %v; want ErrCannotOpen", got, err)
			}
		})
	}
}

// The key file's key moved to HEBB_VAULT_KEY, with or without its id,
// opens what the key file sealed (README: keep the key outside the data dir).
func TestLoadKeyFileMovedToEnv(t *testing.T) {
	dir := t.TempDir()
	fromFile, _, err := Load("", dir)
	if err != nil {
		t.Fatal(err)
	}
	sealed, _ := fromFile.Seal([]byte("v"), "t", "a", "i")
	b, err := os.ReadFile(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	spec := strings.TrimSpace(string(b))
	_, bare, _ := strings.Cut(spec, ":")
	for name, env := range map[string]string{"the key file's line": spec, "its base64 alone": bare} {
		fromEnv, _, err := Load(env, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := fromEnv.Open(sealed, "t", "a", "i"); err != nil || string(got) != "v" {
			t.Errorf("HEBB_VAULT_KEY set to %s: Open = %q, %v", name, got, err)
		}
	}
}
