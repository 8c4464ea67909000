package main

import (
	"flag"
	"strings"
	"testing"
)

// Values the flags' types let through but the server cannot use are
// refused before anything is written to the data dir.
func TestServeConfigValidate(t *testing.T) {
	parse := func(args ...string) error {
		var c serveConfig
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		c.flags(fs)
		if err := fs.Parse(args); err != nil {
			return err
		}
		return c.validate(fs)
	}
	if err := parse(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	if err := parse("--public-url", "https://memory.example.com", "--atom-limit", "0", "--vectors-on-disk-above", "0", "--groups", "128",
		"--node-id", "eu-west.node_1", "--cluster-key", strings.Repeat("k", 32)); err != nil {
		t.Fatalf("good values refused: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--groups", "0"}, "--groups"},
		{[]string{"--groups", "129"}, "--groups must be at most 128, not 129"},
		{[]string{"--groups", "100000"}, "--groups must be at most 128"},
		{[]string{"--replicas", "0"}, "--replicas"},
		{[]string{"--daily-query-quota", "-1"}, "--daily-query-quota"},
		{[]string{"--atom-limit", "-5"}, "--atom-limit"},
		{[]string{"--vectors-on-disk-above", "-1"}, "--vectors-on-disk-above"},
		{[]string{"--dead-node-grace", "0s"}, "--dead-node-grace"},
		{[]string{"--public-url", "not a url"}, "--public-url"},
		{[]string{"--chat-public-url", "ftp://x"}, "--chat-public-url"},
		{[]string{"--data-dir", "/tmp/x", "extra"}, `unexpected argument "extra"`},
		{[]string{"--node-id", "node one"}, "--node-id"},
		{[]string{"--node-id", "../n1"}, "--node-id"},
		{[]string{"--node-id", strings.Repeat("n", 65)}, "--node-id"},
		{[]string{"--cluster-key", "too short"}, "--cluster-key"},
	} {
		if err := parse(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
}

// HEBB_BOOTSTRAP_API_KEY is checked with the flags, before the data dir is
// touched, and the refusal says why.
func TestServeConfigValidateBootstrapKey(t *testing.T) {
	for _, tc := range []struct {
		name, key, want string // want "" = accepted
	}{
		{"unset", "", ""},
		{"well formed", "mk_live_b00tstrapKeyForTheConfigTest_x9", ""},
		{"too short", "mk_live_short", "at least 24"},
		{"too long", "mk_live_" + strings.Repeat("a1B2", 33), "at most 128"},
		{"placeholder", "mk_live_your-api-key-here", "documentation stand-in"},
		{"no prefix", "sk-a1B2c3D4e5F6g7H8i9J0k1L2", "must start with mk_live_"},
		{"not URL-safe", "mk_live_a1B2c3D4e5F6g7H8i9J0k1L+", "character 32 is not URL-safe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := serveConfig{bootstrapKey: tc.key}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			c.flags(fs)
			if err := fs.Parse(nil); err != nil {
				t.Fatal(err)
			}
			err := c.validate(fs)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "HEBB_BOOTSTRAP_API_KEY") ||
				!strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one naming HEBB_BOOTSTRAP_API_KEY and %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), tc.key):
				t.Fatalf("the refused key is echoed: %v", err)
			}
		})
	}
}
