package shard

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileSynced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "node-id")
	for _, content := range []string{"node-a\n", "node-b\n"} {
		if err := WriteFileSynced(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		st, serr := os.Stat(path)
		if err != nil || string(b) != content || serr != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("file %q (%v), mode %v (%v), want %q", b, err, st.Mode(), serr, content)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory holds %d entries, want the file alone", len(entries))
	}
	if err := WriteFileSynced(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("a file in a missing directory was written")
	}
}
