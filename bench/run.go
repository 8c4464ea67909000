package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Workload names.
const (
	WorkloadWrite   = "write"
	WorkloadSearch  = "search"
	WorkloadMixed   = "mixed"
	WorkloadTenants = "tenants"
	WorkloadKernels = "kernels"
	WorkloadDefault = "default"
)

// Workloads lists every workload with a one-line description.
var Workloads = []struct{ Name, Help string }{
	{WorkloadWrite, "writes of new texts: single (--batch 1) or batched through /memory/write-batch"},
	{WorkloadSearch, "populate the tenant to --size atoms, then searches (/memory/read, top 10); then a bare scan of --size x --dim vectors"},
	{WorkloadMixed, "populate to --size, then 70% search, 15% write, 10% feedback, 5% recent"},
	{WorkloadTenants, "--tenants orgs made through the admin API sharing --size atoms, mixed load across them"},
	{WorkloadKernels, "vector-scan kernels side by side: vecmath, plain Go, chromem-go, memory-bandwidth ceiling"},
	{WorkloadDefault, "start a local server unless --url, search at --size atoms open loop, then kernels"},
}

// Config is one `hebb bench` run.
type Config struct {
	Workload string
	// URL is the REST base; empty starts a local server from Binary.
	URL        string
	Key        string
	AdminToken string
	Binary     string
	// Rate is requests per second (open loop); 0 runs closed loop.
	Rate        float64
	Duration    time.Duration
	Concurrency int
	// Size is the tenant's atom count (search, mixed) or the total over all
	// tenants (tenants).
	Size    int
	Tenants int
	Seed    uint64
	// Batch is the number of items per write request (write workload).
	Batch int
	// Domains, when > 0, spreads every stream's texts over that many shared
	// domains (text i in domain i mod Domains), so a write workload after a
	// populate writes into the populated domains; 0 gives each stream its
	// own domains of 10,000 texts.
	Domains int
	Kernels KernelConfig
	// Out is the directory reports are written to.
	Out string
	// Progress receives a line a second while anything runs.
	Progress io.Writer
	// Command is the command line, recorded in the report.
	Command string
}

// DefaultConfig returns the defaults of every flag.
func DefaultConfig() Config {
	return Config{Workload: WorkloadDefault, Rate: 5, Duration: 20 * time.Second, Concurrency: 16,
		Size: 10000, Tenants: 100, Seed: 1, Batch: 1, Out: "bench/out",
		Kernels: KernelConfig{N: 100_000, Dim: 384, K: 10, Runs: 9, Seed: 1}}
}

// target is the deployment a run loads.
type target struct {
	cfg   *Config
	api   *API
	key   string
	gen   *TextGen
	rep   *Report
	local *LocalServer
}

// Run executes the configured workload and returns its report (not yet
// written; see Report.Write).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	rep := &Report{Tool: "hebb bench", Workload: cfg.Workload, StartedAt: time.Now().UTC(), Command: cfg.Command,
		Config: cfg.reportConfig(), Git: gitInfo(), Machine: hostMachine()}
	if cfg.Workload != WorkloadKernels {
		if err := runLoad(ctx, &cfg, rep); err != nil {
			return rep, err
		}
	}
	if cfg.Workload == WorkloadSearch && cfg.Size > 0 {
		// The bar of a search: one bare f32 scan of as many vectors of the
		// server's dimension (--dim), measured in the same run.
		// A tenant holding more than --size (it is topped up, never cut)
		// is searched whole: the scan is of as many vectors as it holds.
		kc := cfg.Kernels
		n := rep.searchedAtoms()
		kc.N, kc.K, kc.Runs, kc.Baseline, kc.Progress = n, min(kc.K, n), 5, true, cfg.Progress
		k, err := RunKernels(ctx, kc)
		if err != nil {
			return rep, err
		}
		rep.Kernels = k
	}
	if cfg.Workload == WorkloadKernels || cfg.Workload == WorkloadDefault {
		kc := cfg.Kernels
		kc.Progress = cfg.Progress
		k, err := RunKernels(ctx, kc)
		if err != nil {
			return rep, err
		}
		rep.Kernels = k
	}
	return rep, rep.mostFailed()
}

// ErrMostFailed is a run in which a phase's requests mostly failed: its
// latencies are the failures' (a 429 answers in 0.1 ms), not the server's
// work, so the run is not a measurement.
var ErrMostFailed = errors.New("most requests failed")

func (r *Report) mostFailed() error {
	for _, p := range r.Phases {
		if p.Completed > 0 && p.Errors*2 > p.Completed {
			return fmt.Errorf("%w in phase %s: %d of %d (%v); its figures are the failures', not the server's",
				ErrMostFailed, p.Name, p.Errors, p.Completed, p.ErrorsByCode)
		}
	}
	return nil
}

func progress(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// Check names the first bad value of c (an unknown workload, a flag out of
// range); Run calls it before anything runs, and a caller can before it
// prepares the report directory.
func (c *Config) Check() error {
	known := false
	for _, w := range Workloads {
		known = known || w.Name == c.Workload
	}
	if !known {
		return fmt.Errorf("%w %q", ErrUnknownWorkload, c.Workload)
	}
	// Each bad value named, before anything runs (a NaN rate was refused
	// only after the tenant was populated).
	for _, b := range []struct {
		bad  bool
		flag string
	}{
		{!(c.Rate >= 0) || c.Rate > maxRate || (c.Rate > 0 && c.Rate < minRate), fmt.Sprintf("--rate must be 0 (closed loop) or %g to %g per second", minRate, maxRate)},
		{c.Duration < minDuration, "--duration must be at least 100ms"},
		{c.Concurrency < 1, "--concurrency must be at least 1"},
		{c.Size < 0, "--size must be 0 or more"},
		{c.Batch < 1 || c.Batch > 500, "--batch must be 1 to 500"},
		{c.Tenants < 1, "--tenants must be at least 1"},
		{c.Domains < 0, "--domains must be 0 or more"},
		{c.Workload == WorkloadTenants && c.Size < c.Tenants, "--size (atoms over all tenants) must be at least --tenants"},
		// The kernels run after the load phases: refused then, the load was for nothing.
		{c.runsKernels() && (c.Kernels.Dim < 1 || c.Kernels.K < 1 ||
			c.Workload != WorkloadSearch && (c.Kernels.Runs < 1 || c.Kernels.N < c.Kernels.K)),
			"--dim and --runs of the kernels must be at least 1, and --n at least 10 (the top-k)"},
	} {
		if b.bad {
			return fmt.Errorf("%w: %s", ErrBadConfig, b.flag)
		}
	}
	return nil
}

// runsKernels reports whether the run ends with kernels: their own
// workload, default's, and a search's bare-scan baseline.
func (c *Config) runsKernels() bool {
	return c.Workload == WorkloadKernels || c.Workload == WorkloadDefault || c.Workload == WorkloadSearch && c.Size > 0
}

// minDuration is the shortest load phase: in a shorter one nothing may
// complete (1ns ran no request, and the plot of nothing panicked) and the
// server's CPU counter, in 10 ms ticks, says little.
const minDuration = 100 * time.Millisecond

// minRate is the slowest open loop: one request in ~3 hours (slower rates
// overflowed the slot times).
const minRate = 1e-4

// maxRate is the fastest open loop: 1e300 was taken, and the schedule's
// counts overflowed (scheduled -9223372036854775808).
const maxRate = 1e6

func (c *Config) reportConfig() ReportConfig {
	rc := ReportConfig{URL: c.URL, Rate: c.Rate, DurationS: c.Duration.Seconds(), Concurrency: c.Concurrency,
		Size: c.Size, Seed: c.Seed, Batch: c.Batch, Domains: c.Domains}
	if c.Workload == WorkloadTenants {
		rc.Tenants = c.Tenants
	}
	if c.Workload == WorkloadKernels || c.Workload == WorkloadDefault {
		rc.KernelN, rc.KernelDim, rc.KernelRuns = c.Kernels.N, c.Kernels.Dim, c.Kernels.Runs
	}
	return rc
}

// runLoad connects (or starts a local server), then runs the workload.
func runLoad(ctx context.Context, cfg *Config, rep *Report) (err error) {
	t, err := connect(ctx, cfg, rep)
	if err != nil {
		return err
	}
	if t.local != nil {
		defer func() {
			if e := t.local.Stop(); e != nil && err == nil {
				err = fmt.Errorf("cannot stop the local server: %w", e)
			}
		}()
	}
	switch cfg.Workload {
	case WorkloadWrite:
		return t.write(ctx)
	case WorkloadSearch, WorkloadDefault:
		return t.search(ctx)
	case WorkloadMixed:
		return t.mixed(ctx)
	case WorkloadTenants:
		return t.tenants(ctx)
	}
	return fmt.Errorf("%w %q", ErrUnknownWorkload, cfg.Workload)
}

func connect(ctx context.Context, cfg *Config, rep *Report) (*target, error) {
	t := &target{cfg: cfg, key: cfg.Key, gen: NewTextGen(cfg.Seed), rep: rep}
	t.gen.domains = uint64(cfg.Domains)
	url, admin := cfg.URL, cfg.AdminToken
	if url == "" {
		if cfg.Binary == "" {
			return nil, fmt.Errorf("%w: no --url and no hebb binary to start a local server", ErrBadConfig)
		}
		fmt.Fprintf(progress(cfg.Progress), "starting a local server (%s serve, hash embedder)...\n", cfg.Binary)
		s, err := StartLocalServer(ctx, cfg.Binary)
		if err != nil {
			return nil, err
		}
		t.local, url, admin, t.key = s, s.URL, s.AdminToken, s.Key
	}
	api, err := NewAPI(url, admin, cfg.Concurrency+populateWorkers, 30*time.Second)
	if err != nil {
		if t.local != nil {
			_ = t.local.Stop()
		}
		return nil, err
	}
	t.api = api
	var health struct {
		Version string `json:"version"`
	}
	// Ctrl-C is answered at once: a server that accepts and never answers
	// held the run for the client's 30 s timeout.
	if err := whileCtx(ctx, func() error { return api.Call("GET", "/health", "", nil, &health) }); err != nil {
		if t.local != nil {
			_ = t.local.Stop()
		}
		return nil, fmt.Errorf("cannot reach %s: %w", url, err)
	}
	if err := t.awaitServer(ctx, url); err != nil {
		return nil, err
	}
	rep.Server = &ServerInfo{URL: api.Base(), Version: health.Version, Local: t.local != nil}
	if t.local != nil {
		rep.Server.Flags = t.local.Flags
	}
	if t.key == "" && cfg.Workload != WorkloadTenants {
		if t.local != nil {
			_ = t.local.Stop()
		}
		return nil, ErrNoKey
	}
	return t, nil
}

// awaitServer waits until a server given by --url reports ready, saying
// so when it is not yet (a restarted node replaying its log): requests sent
// meanwhile would wait for the replay and count it as their latency. A
// local server is ready once started.
func (t *target) awaitServer(ctx context.Context, url string) error {
	if t.local != nil {
		return nil
	}
	said := false
	err := awaitReady(ctx, t.api, readyLimit, func() error {
		if !said {
			fmt.Fprintf(progress(t.cfg.Progress), "waiting for %s to be ready...\n", url)
			said = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	return nil
}

// whileCtx runs f and returns its error, or ctx's as soon as ctx ends (f
// then finishes on its own).
func whileCtx(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
