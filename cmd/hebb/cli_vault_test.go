package main

import (
	"io"
	"strings"
	"testing"
)

// Only the final line ending is dropped from a value read from stdin.
func TestReadSecretValue(t *testing.T) {
	for in, want := range map[string]string{
		"s3cr3t\n":              "s3cr3t",
		"s3cr3t":                "s3cr3t",
		"s3cr3t\r\n":            "s3cr3t",
		"line1\nline2\n\n\r\n":  "line1\nline2\n\n",
		"ends-with-cr\r":        "ends-with-cr\r",
		"-----END KEY-----\n\n": "-----END KEY-----\n",
	} {
		got, err := readSecretValue(&cliEnv{stdin: strings.NewReader(in), stderr: io.Discard})
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "\n", "\r\n"} {
		if _, err := readSecretValue(&cliEnv{stdin: strings.NewReader(in), stderr: io.Discard}); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
