package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hebbdb/hebb/bench"
)

// benchCmd runs `hebb bench <workload> [flags]` (see package bench).
func benchCmd(args []string) error {
	if len(args) > 0 && args[0] == "embedder" {
		// The embedder evaluation (paraphrase and agent-memory sets), run
		// from the repository root.
		return bench.RunEmbedderEval(os.Stdout, bench.EmbedderEvalOptions{
			ParaphrasePath: bench.DefaultParaphrasePath, MemoryPath: bench.DefaultMemoryPairsPath})
	}
	cfg, err := benchConfig(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := cfg.Check(); err != nil { // before --out is made
		return err
	}
	if err := writableDir(cfg.Out); err != nil { // before the run, not after it
		return err
	}
	// A closed terminal (SIGHUP) stops the run the same way, so the
	// throw-away server is stopped and its data dir removed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// After the first signal the next one ends the process at once: a run
	// waiting on a stalled server ignored every further Ctrl-C.
	context.AfterFunc(ctx, stop)
	rep, err := bench.Run(ctx, cfg)
	if rep == nil || (len(rep.Phases) == 0 && rep.Kernels == nil) {
		return err
	}
	rep.Interrupted = ctx.Err() != nil
	rep.Summary(os.Stdout)
	jsonPath, pngPath, werr := rep.Write(cfg.Out)
	if werr != nil {
		return errors.Join(err, werr)
	}
	fmt.Println("report  ", jsonPath)
	if pngPath != "" {
		fmt.Println("plot    ", pngPath)
	}
	return err
}

// benchConfig parses the workload name and flags.
func benchConfig(args []string) (bench.Config, error) {
	cfg := bench.DefaultConfig()
	fs := benchFlags(&cfg)
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(os.Stderr, benchUsage(fs))
		return cfg, flag.ErrHelp
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return cfg, errors.New(benchUsage(fs))
	}
	cfg.Workload = args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q\n\n%s", fs.Arg(0), benchUsage(fs))
	}
	fromEnv(&cfg)
	cfg.Kernels.Seed = cfg.Seed
	cfg.Progress = os.Stderr
	cfg.Command = "hebb bench " + strings.Join(redactSecrets(args), " ")
	if cfg.URL == "" {
		exe, err := os.Executable()
		if err != nil {
			return cfg, fmt.Errorf("cannot find the hebb binary to start a local server: %w", err)
		}
		cfg.Binary = exe
	}
	return cfg, nil
}

// fromEnv fills what the flags left empty from the environment, and says
// when the target came from HEBB_URL: the README has client users export
// it, and a run meant for a local server loaded that one.
func fromEnv(cfg *bench.Config) {
	if cfg.URL == "" {
		if cfg.URL = os.Getenv("HEBB_URL"); cfg.URL != "" {
			fmt.Fprintf(os.Stderr, "bench: target %s from HEBB_URL (unset it, or give --url, for a local server)\n", cfg.URL)
		}
	}
	if cfg.Key == "" {
		cfg.Key = envOr("MNEMOVERSE_API_KEY", os.Getenv("HEBB_API_KEY"))
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = os.Getenv("HEBB_ADMIN_TOKEN")
	}
}

func benchFlags(cfg *bench.Config) *flag.FlagSet {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), benchUsage(fs)) }
	// Defaults from the environment are filled after parsing (fromEnv), so
	// that -h does not print a key or token in clear.
	fs.StringVar(&cfg.URL, "url", "", "REST base (http://host:port/api/v1; default $HEBB_URL); neither starts a local server")
	fs.StringVar(&cfg.Key, "key", "", "API key (default $MNEMOVERSE_API_KEY or $HEBB_API_KEY)")
	fs.StringVar(&cfg.AdminToken, "admin-token", "", "the server's --admin-token (tenants workload; default $HEBB_ADMIN_TOKEN)")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "requests per second, open loop; 0 = closed loop (maximum throughput)")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the load runs")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "workers (connections), each with one request in flight")
	fs.IntVar(&cfg.Size, "size", cfg.Size, "atoms in the tenant (search, mixed) or over all tenants (tenants)")
	fs.IntVar(&cfg.Tenants, "tenants", cfg.Tenants, "number of orgs (tenants workload)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of every generated text, query and vector")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "items per write request (write workload); >1 uses /memory/write-batch")
	fs.IntVar(&cfg.Domains, "domains", 0, "spread every stream over this many shared domains (writes then land in the populated ones); 0: 10,000 texts per domain")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "directory of the JSON report and PNG plot")
	fs.IntVar(&cfg.Kernels.N, "n", cfg.Kernels.N, "vectors scanned by the kernels comparison")
	fs.IntVar(&cfg.Kernels.Dim, "dim", cfg.Kernels.Dim, "dimension of the kernels comparison")
	fs.IntVar(&cfg.Kernels.Runs, "runs", cfg.Kernels.Runs, "timed runs per kernel (the median is reported)")
	return fs
}

func benchUsage(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("usage: hebb bench <workload> [flags]\n\nworkloads:\n")
	for _, w := range bench.Workloads {
		fmt.Fprintf(&b, "  %-8s %s\n", w.Name, w.Help)
	}
	b.WriteString("\nWithout --url a local server is started on free ports (hash embedder, no query quota).\n\nflags:\n")
	out := fs.Output()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	return b.String()
}

// redactSecrets returns args with the values of --key and --admin-token
// replaced, for the report.
func redactSecrets(args []string) []string {
	out := make([]string, len(args))
	hide := false
	for i, a := range args {
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		secret := strings.HasPrefix(a, "-") && (name == "key" || name == "admin-token")
		switch {
		case hide:
			out[i], hide = "<redacted>", false
		case secret && inline:
			out[i] = a[:strings.Index(a, "=")+1] + "<redacted>"
		default:
			out[i], hide = a, secret
		}
	}
	return out
}

// writableDir makes dir and checks that a report can be written in it.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return fmt.Errorf("--out %s is not writable: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}
