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
	if err := parse("--public-url", "https://memory.example.com", "--atom-limit", "0", "--vectors-on-disk-above", "0",
		"--node-id", "eu-west.node_1", "--cluster-key", strings.Repeat("k", 32)); err != nil {
		t.Fatalf("good values refused: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--groups", "0"}, "--groups"},
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
