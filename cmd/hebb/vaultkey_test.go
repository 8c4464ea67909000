package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hebbdb/hebb/router/vault"
)

// A vault master key drawn where one was needed already is logged: in a
// data dir that holds a cluster (its key file was lost) and on a node
// joining a cluster; a fresh single node, a key file found and a key given
// by HEBB_VAULT_KEY are not.
func TestLoadVaultWarnings(t *testing.T) {
	t.Setenv("HEBB_VAULT_KEY", "")
	cases := []struct {
		name                  string
		keyFile, held, joined bool
		warn                  string
	}{
		{"fresh node", false, false, false, ""},
		{"restart", true, true, false, ""},
		{"lost key file", false, true, false, "key file was missing"},
		{"joining", false, false, true, "of its own"},
		{"joining with a copied key file", true, false, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.keyFile {
				if _, _, err := vault.Load("", dir); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			ring, err := loadVault(slog.New(slog.NewTextHandler(&out, nil)), dir, tc.held, tc.joined)
			if err != nil || ring == nil {
				t.Fatalf("loadVault: %v", err)
			}
			if got := out.String(); tc.warn == "" && got != "" || tc.warn != "" && !strings.Contains(got, tc.warn) {
				t.Fatalf("log %q, want %q", got, tc.warn)
			}
			if _, err := os.Stat(filepath.Join(dir, vault.KeyFile)); err != nil {
				t.Fatalf("key file: %v", err)
			}
		})
	}
	t.Setenv("HEBB_VAULT_KEY", "aGViYi1sb2NhbC1jbHVzdGVyLXZhdWx0LWtleS1kZXY=")
	var out bytes.Buffer
	if _, err := loadVault(slog.New(slog.NewTextHandler(&out, nil)), t.TempDir(), true, false); err != nil || out.Len() > 0 {
		t.Fatalf("with HEBB_VAULT_KEY: %v, log %q", err, out.String())
	}
}

// HEBB_VAULT_KEY takes the place of the data dir's key file: a ring that
// lacks the file's key is logged (without either key), one that holds it,
// under any id, is not.
func TestLoadVaultEnvAgainstKeyFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HEBB_VAULT_KEY", "")
	if _, _, err := vault.Load("", dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, vault.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	fileKey := strings.TrimSpace(string(b))
	_, bare, _ := strings.Cut(fileKey, ":")
	const other = "aGViYi1sb2NhbC1jbHVzdGVyLXZhdWx0LWtleS1kZXY="
	cases := []struct{ env, warn string }{
		{fileKey, ""},
		{bare, ""},
		{"new:" + other + "," + fileKey, ""},
		{other, "does not hold the key of the data dir's vault key file"},
	}
	for _, tc := range cases {
		t.Setenv("HEBB_VAULT_KEY", tc.env)
		var out bytes.Buffer
		if _, err := loadVault(slog.New(slog.NewTextHandler(&out, nil)), dir, true, false); err != nil {
			t.Fatalf("env %d keys: %v", strings.Count(tc.env, ",")+1, err)
		}
		got := out.String()
		if tc.warn == "" && got != "" || tc.warn != "" && !strings.Contains(got, tc.warn) {
			t.Errorf("log %q, want %q", got, tc.warn)
		}
		if strings.Contains(got, bare) || strings.Contains(got, other) {
			t.Errorf("the log names a key: %q", got)
		}
	}
}
