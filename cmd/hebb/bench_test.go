package main

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hebbdb/hebb/bench"
)

func TestBenchConfig(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(t *testing.T, c bench.Config)
		wantErr string
	}{
		{name: "defaults", args: []string{"default"}, check: func(t *testing.T, c bench.Config) {
			d := bench.DefaultConfig()
			if c.Workload != "default" || c.Rate != d.Rate || c.Duration != d.Duration || c.Size != d.Size ||
				c.Kernels.N != 100_000 || c.Kernels.Dim != 384 || c.Binary == "" || c.URL != "" {
				t.Errorf("config %+v", c)
			}
		}},
		{name: "flags", args: []string{"search", "--url", "http://h:1/api/v1", "--key", "k", "--rate", "0",
			"--duration", "3s", "--concurrency", "4", "--size", "100000", "--seed", "9", "--batch", "50",
			"--out", "/tmp/x", "--n", "1000", "--dim", "8", "--runs", "3", "--admin-token", "adm", "--tenants", "7"},
			check: func(t *testing.T, c bench.Config) {
				if c.URL != "http://h:1/api/v1" || c.Key != "k" || c.Rate != 0 || c.Duration != 3*time.Second ||
					c.Concurrency != 4 || c.Size != 100000 || c.Seed != 9 || c.Batch != 50 || c.Out != "/tmp/x" ||
					c.Kernels.N != 1000 || c.Kernels.Dim != 8 || c.Kernels.Runs != 3 || c.Kernels.Seed != 9 ||
					c.AdminToken != "adm" || c.Tenants != 7 || c.Binary != "" {
					t.Errorf("config %+v", c)
				}
			}},
		{name: "key from MNEMOVERSE_API_KEY", args: []string{"search"},
			env: map[string]string{"MNEMOVERSE_API_KEY": "m", "HEBB_API_KEY": "h"},
			check: func(t *testing.T, c bench.Config) {
				if c.Key != "m" {
					t.Errorf("key %q, want m", c.Key)
				}
			}},
		{name: "key from HEBB_API_KEY", args: []string{"search"}, env: map[string]string{"HEBB_API_KEY": "h"},
			check: func(t *testing.T, c bench.Config) {
				if c.Key != "h" {
					t.Errorf("key %q, want h", c.Key)
				}
			}},
		{name: "no workload", args: nil, wantErr: "usage: hebb bench"},
		{name: "flag first", args: []string{"--rate", "5"}, wantErr: "usage: hebb bench"},
		{name: "stray argument", args: []string{"search", "extra"}, wantErr: `unexpected argument "extra"`},
		{name: "bad flag", args: []string{"search", "--rate", "fast"}, wantErr: "invalid value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"MNEMOVERSE_API_KEY", "HEBB_API_KEY", "HEBB_URL", "HEBB_ADMIN_TOKEN"} {
				t.Setenv(k, tc.env[k])
			}
			cfg, err := benchConfig(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg)
		})
	}
	t.Run("help", func(t *testing.T) {
		if _, err := benchConfig([]string{"search", "-h"}); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("err = %v, want flag.ErrHelp", err)
		}
	})
}

// A refused workload or flag leaves no report directory behind.
func TestBenchRefusesBeforeOut(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"search", "--rate", "-1"}, {"search", "--rate", "1e300"}, {"write", "--duration", "1ns"}} {
		out := filepath.Join(t.TempDir(), "out")
		err := benchCmd(append(args, "--out", out))
		if !errors.Is(err, bench.ErrUnknownWorkload) && !errors.Is(err, bench.ErrBadConfig) {
			t.Errorf("%v: err = %v", args, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v made %s (%v)", args, out, err)
		}
	}
}

func TestRedactSecrets(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := strings.Join(redactSecrets(strings.Fields(in)), " "); got != want {
			t.Errorf("redactSecrets(%q) = %q, want %q", in, got, want)
		}
	}
	f("search --key mk_live_x --rate 5", "search --key <redacted> --rate 5")
	f("search -key=mk_live_x --admin-token adm", "search -key=<redacted> --admin-token <redacted>")
	f("tenants --admin-token=adm --keyboard 1", "tenants --admin-token=<redacted> --keyboard 1")
	f("default", "default")
}

// -h shows no key or token from the environment (they were the flags'
// printed defaults); the run still takes them.
func TestBenchHelpHidesSecrets(t *testing.T) {
	const key, token = "mk_live_helpshouldnotshowthiskey0123", "admin-token-not-for-help"
	t.Setenv("HEBB_API_KEY", key)
	t.Setenv("HEBB_ADMIN_TOKEN", token)
	cfg := bench.DefaultConfig()
	if usage := benchUsage(benchFlags(&cfg)); strings.Contains(usage, key) || strings.Contains(usage, token) {
		t.Fatalf("usage shows a secret:\n%s", usage)
	}
	c, err := benchConfig([]string{"search", "--url", "http://h:1/api/v1"})
	if err != nil || c.Key != key || c.AdminToken != token {
		t.Fatalf("config %+v, %v", c, err)
	}
}
