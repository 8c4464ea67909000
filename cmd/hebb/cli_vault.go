package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	hebb "github.com/hebbdb/hebb/client"
)

const vaultUsage = `usage: hebb vault <command> [flags]
  put <alias> [--context TEXT]  store a secret; the value is read from stdin,
                                without its final line ending
  list                          aliases and contexts (values are never shown)
  get <alias>                   one secret's record (not its value)
`

// cmdVault is `hebb vault ...`.
func cmdVault(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(env.stderr, vaultUsage)
		if len(args) == 0 {
			return errors.New("vault: missing command")
		}
		return nil
	}
	name, args := args[0], args[1:]
	argsUsage, ok := map[string]string{"put": "<alias>", "list": "", "get": "<alias>"}[name]
	if !ok {
		fmt.Fprint(env.stderr, vaultUsage)
		return fmt.Errorf("vault: unknown command %q", name)
	}
	fs := newFlagSet(env, "vault "+name, argsUsage)
	var cf commonFlags
	cf.register(fs, env, cmdTimeout)
	purpose := new(string)
	if name == "put" {
		purpose = fs.String("context", "", "what the secret is for")
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	want := 0
	if argsUsage != "" {
		want = 1
	}
	if err := wantArgs(fs, pos, want, want); err != nil {
		return err
	}
	var value string
	if name == "put" {
		if value, err = readSecretValue(env); err != nil {
			return err
		}
	}
	c, cctx, cancel, err := cf.connect(ctx, env)
	if err != nil {
		return err
	}
	defer cancel()
	var out any
	switch name {
	case "put":
		out, err = c.PutSecret(cctx, hebb.SecretRequest{Alias: pos[0], Value: value, Context: *purpose})
	case "list":
		out, err = c.Secrets(cctx)
	case "get":
		out, err = c.Secret(cctx, pos[0])
	}
	if err != nil {
		return err
	}
	if cf.json && name == "list" {
		return printList(env.stdout, "secrets", out)
	}
	if cf.json {
		return printJSON(env.stdout, out)
	}
	printSecrets(env, out)
	return nil
}

// readSecretValue reads the value from stdin, without its final line
// ending (one \n or \r\n), so it never appears in the process list or the
// shell history.
func readSecretValue(env *cliEnv) (string, error) {
	if env.stderrTTY {
		fmt.Fprintln(env.stderr, "reading the secret value from stdin (end with Ctrl-D)")
	}
	b, err := io.ReadAll(io.LimitReader(env.stdin, 1<<20))
	if err != nil {
		return "", fmt.Errorf("cannot read the secret value: %w", err)
	}
	// Only the one line ending echo or a here-string adds: the rest is the
	// value (a PEM key keeps all but its last newline).
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if len(b) > 0 && b[len(b)-1] != '\n' {
		v = string(b)
	}
	if v == "" {
		return "", errors.New("vault put: no value on stdin")
	}
	return v, nil
}

func printSecrets(env *cliEnv, v any) {
	switch s := v.(type) {
	case *hebb.Secret:
		fmt.Fprintf(env.stdout, "%s  %s  %s  %s\n", s.Alias, s.AtomID, formatTime(s.CreatedAt), s.Context)
	case []hebb.Secret:
		if len(s) == 0 {
			fmt.Fprintln(env.stdout, "no secrets")
		}
		for i := range s {
			printSecrets(env, &s[i])
		}
	}
}
