package main

import (
	"flag"
	"os/exec"
	"strings"
	"testing"
)

func TestEnvelopeText(t *testing.T) {
	for body, want := range map[string]string{
		`{"code":"NOT_FOUND","message":"Node not found","requestId":"r","retryable":false,"details":null}`:                                                                     "NOT_FOUND: Node not found",
		`{"code":"VALIDATION_ERROR","message":"Request validation failed","details":{"errors":[{"loc":["path","node_id"],"msg":"cannot drain n2 now","type":"value_error"}]}}`: "VALIDATION_ERROR: Request validation failed: cannot drain n2 now",
		"upstream timed out\n": "upstream timed out",
	} {
		if got := envelopeText([]byte(body)); got != want {
			t.Errorf("envelopeText(%s) = %q, want %q", body, got, want)
		}
	}
}

// -h prints a command's flags and exits 0; the top-level usage lists every
// command.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"serve", "-h"}, {"serve", "--help"}, {"admin", "create-user", "-h"}, {"--help"},
		{"admin", "-h"}, {"mcp", "-h"}, {"mcp", "--help"}, {"vault", "put", "-h"}, {"rooms", "-h"}, {"bench", "-h"}} {
		out, err := exec.Command(hebbBin, args...).CombinedOutput()
		if err != nil {
			t.Errorf("hebb %v: %v\n%s", args, err, out)
		}
		if strings.Contains(string(out), "help requested") {
			t.Errorf("hebb %v printed %q", args, out)
		}
	}
	if out, _ := exec.Command(hebbBin, "vault", "put", "-h").CombinedOutput(); !strings.Contains(string(out), "vault put <alias>") {
		t.Errorf("vault put's usage lacks its argument:\n%s", out)
	}
	if out, err := exec.Command(hebbBin, "vault", "get", "x", "--context", "y").CombinedOutput(); err == nil {
		t.Errorf("vault get took put's --context:\n%s", out)
	}
	out, _ := exec.Command(hebbBin, "--help").CombinedOutput()
	for _, cmd := range []string{"serve", "admin remove-node", "admin create-user", "admin set-password", "bench", "mcp", "import"} {
		if !strings.Contains(string(out), "hebb "+cmd) {
			t.Errorf("usage lacks hebb %s:\n%s", cmd, out)
		}
	}
}

func TestAdminBase(t *testing.T) {
	for in, want := range map[string]string{"http://n1:8080": "http://n1:8080", "http://n1:8080/": "http://n1:8080",
		"http://n1:8080/api/v1": "http://n1:8080", "http://n1:8080/api/v1/": "http://n1:8080"} {
		if got := adminBase(in); got != want {
			t.Errorf("adminBase(%q) = %q, want %q", in, got, want)
		}
	}
	t.Setenv("HEBB_URL_ADMIN", "")
	t.Setenv("HEBB_URL", "http://n2:8080/api/v1")
	if got := adminBase(adminDefaultURL()); got != "http://n2:8080" {
		t.Errorf("with HEBB_URL: %q", got)
	}
}

// The admin commands take HEBB_ADMIN_TOKEN unless --admin-token is given,
// and -h prints neither (the token was the flag's printed default).
func TestAdminTokenFlag(t *testing.T) {
	t.Setenv("HEBB_ADMIN_TOKEN", "from-the-environment")
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	_, token := adminFlags(fs)
	var help strings.Builder
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if strings.Contains(help.String(), "from-the-environment") {
		t.Fatalf("-h shows the token:\n%s", help.String())
	}
	if err := fs.Parse(nil); err != nil || token.get() != "from-the-environment" {
		t.Fatalf("from the environment: %q, %v", token.get(), err)
	}
	if err := fs.Parse([]string{"--admin-token", "given"}); err != nil || token.get() != "given" {
		t.Fatalf("given: %q, %v", token.get(), err)
	}
}
