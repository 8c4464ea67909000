package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	hebb "github.com/hebbdb/hebb/client"
)

// clientUsage is the part of the usage text about the client subcommands.
const clientUsage = `  hebb write [flags] <content>       store a memory ("-" or nothing: read stdin)
  hebb read [flags] <query>          search memories
  hebb recent [flags]                the newest memories, page by page
  hebb stats                         the account's statistics
  hebb export [-o FILE]              stream every atom as JSONL (default: stdout)
  hebb import [flags] FILE           re-write an export into this account
  hebb rooms create|list|invite|invites|join|members|revoke|archive ...
  hebb vault put|list|get ...
                        client commands: key from MNEMOVERSE_API_KEY or HEBB_API_KEY,
                        server from HEBB_URL or --url (default ` + hebb.DefaultBaseURL + `);
                        --json for machine-readable output
`

// cliEnv is what a client command reads and writes; tests replace it.
type cliEnv struct {
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	getenv    func(string) string
	stderrTTY bool // progress bars only on a terminal
}

func osCLIEnv() *cliEnv {
	return &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, stderrTTY: isTerminal(os.Stderr)}
}

// isTerminal reports a character device (a terminal, not a file or pipe).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// clientCommands maps each client subcommand to its function.
var clientCommands = map[string]func(ctx context.Context, env *cliEnv, args []string) error{
	"write":  cmdWrite,
	"read":   cmdRead,
	"recent": cmdRecent,
	"stats":  cmdStats,
	"export": cmdExport,
	"import": cmdImport,
	"rooms":  cmdRooms,
	"vault":  cmdVault,
}

// runClientCommand runs a client subcommand of the binary; Ctrl-C cancels it.
func runClientCommand(name string, args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return clientCommand(ctx, osCLIEnv(), name, args)
}

func clientCommand(ctx context.Context, env *cliEnv, name string, args []string) error {
	cmd, ok := clientCommands[name]
	if !ok {
		return fmt.Errorf("unknown command %q", name)
	}
	err := cmd(ctx, env, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// commonFlags are the flags of every client command.
type commonFlags struct {
	url     string
	json    bool
	timeout time.Duration
}

func (f *commonFlags) register(fs *flag.FlagSet, env *cliEnv, timeout time.Duration) {
	def := env.getenv("HEBB_URL")
	if def == "" {
		def = hebb.DefaultBaseURL
	}
	fs.StringVar(&f.url, "url", def, "REST base of the server (env HEBB_URL)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of text")
	fs.DurationVar(&f.timeout, "timeout", timeout, "give up after this long (0: never)")
}

// apiKey reads the key from MNEMOVERSE_API_KEY, else HEBB_API_KEY.
func apiKey(env *cliEnv) (string, error) {
	for _, k := range []string{"MNEMOVERSE_API_KEY", "HEBB_API_KEY"} {
		if v := strings.TrimSpace(env.getenv(k)); v != "" {
			return v, nil
		}
	}
	return "", errors.New("no API key: set MNEMOVERSE_API_KEY or HEBB_API_KEY")
}

// connect returns the client and the command's context.
func (f *commonFlags) connect(ctx context.Context, env *cliEnv) (*hebb.Client, context.Context, context.CancelFunc, error) {
	key, err := apiKey(env)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := hebb.New(f.url, key, hebb.WithAgent("hebb-cli", ""))
	if err != nil {
		return nil, nil, nil, err
	}
	cancel := context.CancelFunc(func() {})
	if f.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
	}
	return c, ctx, cancel, nil
}

// isHelp reports whether arg asks for a command's usage.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

func newFlagSet(env *cliEnv, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("hebb "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: hebb %s %s\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags placed anywhere among the positional arguments
// (everything after "--" is positional) and returns the positional ones.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(fs *flag.FlagSet, pos []string, min, max int) error {
	if len(pos) < min || max >= 0 && len(pos) > max {
		fs.Usage()
		return fmt.Errorf("%s: wrong number of arguments", fs.Name())
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printList prints a list as the REST API answers it, {key: [...]}, so
// --json has the endpoint's shape on every command.
func printList(w io.Writer, key string, list any) error {
	if v := reflect.ValueOf(list); v.Kind() == reflect.Slice && v.IsNil() {
		list = []struct{}{}
	}
	return printJSON(w, map[string]any{key: list})
}

// splitList reads a comma-separated flag value; "" is nil.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// optFloat is a float flag that knows whether it was given.
type optFloat struct{ v *float64 }

func (o *optFloat) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatFloat(*o.v, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	o.v = &f
	return nil
}

// optInt is an int flag that knows whether it was given.
type optInt struct{ v *int }

func (o *optInt) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.Itoa(*o.v)
}

func (o *optInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	o.v = &n
	return nil
}

// oneLine shortens text to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// humanBytes renders a byte count: 512 B, 3.4 kB, 12.0 MB.
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
