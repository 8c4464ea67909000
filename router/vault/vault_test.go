package vault

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
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
