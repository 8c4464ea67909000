package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Report is everything one `hebb bench` run measured, as written to JSON.
type Report struct {
	Tool     string `json:"tool"`
	Workload string `json:"workload"`
	// Interrupted: a signal ended the run before its phases did, so the
	// figures cover less than the configured duration.
	Interrupted bool            `json:"interrupted,omitempty"`
	StartedAt   time.Time       `json:"started_at"`
	Command     string          `json:"command,omitempty"`
	Config      ReportConfig    `json:"config"`
	Git         GitInfo         `json:"git"`
	Machine     Machine         `json:"machine"`
	Server      *ServerInfo     `json:"server,omitempty"`
	Populate    *PopulateResult `json:"populate,omitempty"`
	// Floor is the latency of the cheapest call (GET /health, one at a
	// time) measured before a search phase: what the network, HTTP and
	// scheduling cost any answer, however fast the search.
	Floor *Latency `json:"round_trip_floor,omitempty"`
	// IdleFloor is the same with the client idle for a millisecond before
	// each call, as it is while a search runs: both processes' CPUs may
	// have gone to sleep and must be woken.
	IdleFloor *Latency       `json:"round_trip_floor_idle,omitempty"`
	Phases    []*PhaseResult `json:"phases,omitempty"`
	Kernels   *KernelResult  `json:"kernels,omitempty"`
}

// ReportConfig is the run's configuration without secrets.
type ReportConfig struct {
	URL         string  `json:"url,omitempty"`
	Rate        float64 `json:"rate_per_s"`
	DurationS   float64 `json:"duration_s"`
	Concurrency int     `json:"concurrency"`
	Size        int     `json:"size"`
	Tenants     int     `json:"tenants,omitempty"`
	Seed        uint64  `json:"seed"`
	Batch       int     `json:"batch"`
	Domains     int     `json:"domains,omitempty"`
	KernelN     int     `json:"kernel_n,omitempty"`
	KernelDim   int     `json:"kernel_dim,omitempty"`
	KernelRuns  int     `json:"kernel_runs,omitempty"`
}

// GitInfo identifies the source the harness was run from.
type GitInfo struct {
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty"`
}

// Machine describes the host the client ran on.
type Machine struct {
	CPUModel   string `json:"cpu_model"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GoVersion  string `json:"go_version"`
	MemTotalMB int64  `json:"mem_total_mb,omitempty"`
}

// ServerInfo describes the deployment under test.
type ServerInfo struct {
	URL     string `json:"url"`
	Version string `json:"version"`
	// Local is true when the harness started the server itself.
	Local bool   `json:"local"`
	Flags string `json:"flags,omitempty"`
}

// hostMachine reads the CPU model and memory from /proc where it exists.
func hostMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GOOS: runtime.GOOS,
		GOARCH: runtime.GOARCH, GoVersion: runtime.Version()}
	m.CPUModel = procField("/proc/cpuinfo", "model name", "Hardware", "cpu model", "Processor")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		var n int64
		if _, err := fmt.Sscan(strings.TrimSuffix(kb, " kB"), &n); err == nil {
			m.MemTotalMB = n / 1024
		}
	}
	if m.CPUModel == "" {
		m.CPUModel = "unknown"
	}
	return m
}

// procField returns the value of the first "key : value" line of path whose
// key is one of keys.
func procField(path string, keys ...string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		for _, want := range keys {
			if strings.TrimSpace(k) == want {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}

// Set by the build (make build: -ldflags -X): the commit the binary was
// built from and whether its tree had uncommitted changes ("true").
var buildCommit, buildDirty string

// gitInfo names the source the harness was built from: the commit the build
// stamped, else what git says of the working directory, else the Go build
// information (which `-buildvcs=false` leaves empty).
func gitInfo() GitInfo {
	if buildCommit != "" {
		return GitInfo{Commit: buildCommit, Dirty: buildDirty == "true"}
	}
	g := GitInfo{Commit: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				g.Commit = s.Value
			case "vcs.modified":
				g.Dirty = s.Value == "true"
			}
		}
	}
	if g.Commit != "unknown" || !inOwnCheckout() {
		return g
	}
	// A `go build -buildvcs=false` binary run in hebb's checkout: its HEAD,
	// most likely (if not surely) what the binary was built from.
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		g = GitInfo{Commit: strings.TrimSpace(string(out))}
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
			g.Dirty = len(bytes.TrimSpace(st)) > 0
		}
	}
	return g
}

// inOwnCheckout reports whether the working directory is inside a git
// checkout of this module: another repository's HEAD was reported as the
// commit of a binary run there.
func inOwnCheckout() bool {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return false
	}
	mod, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(top)), "go.mod"))
	return err == nil && bytes.HasPrefix(bytes.TrimSpace(mod), []byte("module "+modulePath+"\n"))
}

// modulePath is this module's path, as go.mod names it.
const modulePath = "github.com/hebbdb/hebb"

// Write stores the report as <dir>/<workload>-<UTC time>.json with its
// latency plot beside it (.png, when the report has load phases) and
// returns the paths written.
func (r *Report) Write(dir string) (jsonPath, pngPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("cannot create %s: %w", dir, err)
	}
	stem := filepath.Join(dir, r.Workload+"-"+r.StartedAt.UTC().Format("20060102T150405Z"))
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", fmt.Errorf("cannot encode the report: %w", err)
	}
	// Never over an earlier report: two runs started in the same second
	// (a short kernels run, a script) take -2, -3, ...
	f, stem, err := createNew(stem, ".json")
	if err != nil {
		return "", "", fmt.Errorf("cannot write the report: %w", err)
	}
	jsonPath = stem + ".json"
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", "", fmt.Errorf("cannot write the report: %w", err)
	}
	if !anyRecorded(r.Phases) {
		// Nothing to draw (a log axis over no points panicked in gonum).
		return jsonPath, "", nil
	}
	pngPath = stem + ".png"
	if err := PlotPhases(pngPath, r.title(), r.Phases); err != nil {
		return jsonPath, "", err
	}
	return jsonPath, pngPath, nil
}

// anyRecorded reports whether some phase recorded a request (each one
// recorded has a latency to plot).
func anyRecorded(phases []*PhaseResult) bool {
	return slices.ContainsFunc(phases, func(ph *PhaseResult) bool { return ph.Completed > 0 })
}

// createNew creates stem+ext, or stem-2+ext, stem-3+ext, ... when taken,
// and returns the file and the stem it used.
func createNew(stem, ext string) (*os.File, string, error) {
	for i := 1; ; i++ {
		s := stem
		if i > 1 {
			s = fmt.Sprintf("%s-%d", stem, i)
		}
		f, err := os.OpenFile(s+ext, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, s, nil
		}
		if !errors.Is(err, os.ErrExist) || i >= 1000 {
			return nil, "", err
		}
	}
}

func (r *Report) title() string {
	return fmt.Sprintf("hebb bench %s, %s, %d cores, commit %.12s", r.Workload, r.Machine.CPUModel, r.Machine.Cores, r.Git.Commit)
}

// Summary writes the report's figures as text.
func (r *Report) Summary(w io.Writer) {
	fmt.Fprintf(w, "hebb bench %s  (commit %.12s%s, %s, %d cores, %s/%s)\n", r.Workload, r.Git.Commit,
		map[bool]string{true: " dirty", false: ""}[r.Git.Dirty], r.Machine.CPUModel, r.Machine.Cores, r.Machine.GOOS, r.Machine.GOARCH)
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: a signal stopped the run; the figures cover only the time before it")
	}
	if s := r.Server; s != nil {
		fmt.Fprintf(w, "server   %s  version %s  local %v\n", s.URL, s.Version, s.Local)
	}
	if p := r.Populate; p != nil {
		fmt.Fprintf(w, "populate %d tenant(s), %d atoms target, %d existed, %d added (%d filtered) in %.1fs = %.0f atoms/s\n",
			p.Tenants, p.Target, p.Existing, p.Added, p.Filtered, p.DurationS, p.AtomsPerS)
	}
	if f := r.Floor; f != nil {
		fmt.Fprintf(w, "floor    GET /health one at a time, %d round trips: p50 %.2f ms, p90 %.2f, p99 %.2f, max %.2f\n",
			f.Count, f.P50, f.P90, f.P99, f.Max)
	}
	if f := r.IdleFloor; f != nil {
		fmt.Fprintf(w, "floor    the same, each after 1 ms idle: p50 %.2f ms, p90 %.2f, p99 %.2f, max %.2f\n",
			f.P50, f.P90, f.P99, f.Max)
	}
	for _, ph := range r.Phases {
		rate := "closed loop"
		if ph.Mode == ModeOpen {
			rate = fmt.Sprintf("open loop %g/s", ph.TargetRate)
		}
		fmt.Fprintf(w, "phase    %s: %s, %d workers, %.1fs: %d done, %.1f/s, %d errors %v, %d missed, tags %v\n",
			ph.Name, rate, ph.Concurrency, ph.DurationS, ph.Completed, ph.Throughput, ph.Errors, ph.ErrorsByCode, ph.Missed, ph.Tags)
		if ph.ItemsPerRequest > 1 {
			fmt.Fprintf(w, "  %d items per request: %.0f atoms/s\n", ph.ItemsPerRequest, ph.OKPerS*float64(ph.ItemsPerRequest))
		}
		if c := ph.ServerCPU; c != nil {
			per := fmt.Sprintf("%.0f µs per request", c.PerRequestUs)
			if c.PerItemUs > 0 {
				per = fmt.Sprintf("%.0f µs per item", c.PerItemUs)
			}
			fmt.Fprintf(w, "  server CPU %.1f s: %.2f cores busy, %s\n", c.Seconds, c.Cores, per)
		}
		phaseWarnings(w, ph)
		fmt.Fprintf(w, "  %-12s %8s %9s %9s %9s %9s %9s\n", "op", "count", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms")
		for _, op := range sortedKeys(ph.Ops) {
			o := ph.Ops[op]
			l := o.Latency
			fmt.Fprintf(w, "  %-12s %8d %9.2f %9.2f %9.2f %9.2f %9.2f\n", op, l.Count, l.P50, l.P90, l.P99, l.P999, l.Max)
			if ph.Mode == ModeOpen {
				s := o.Service
				fmt.Fprintf(w, "  %-12s %8s %9.2f %9.2f %9.2f %9.2f %9.2f\n", "  (service)", "", s.P50, s.P90, s.P99, s.P999, s.Max)
			}
			if s := o.Server; s != nil {
				fmt.Fprintf(w, "  %-12s %8d %9.2f %9.2f %9.2f %9.2f %9.2f\n", "  (server)", s.Count, s.P50, s.P90, s.P99, s.P999, s.Max)
			}
		}
	}
	if k := r.Kernels; k != nil {
		fmt.Fprintf(w, "kernels  %d x %d float32 (%.0f MB), exact top-%d, median of %d runs\n",
			k.N, k.Dim, float64(k.Bytes)/1e6, k.K, k.Runs)
		for _, t := range k.Kernels {
			fmt.Fprintf(w, "  %-30s %8.2f ms %6.2f GB/s  %5.2fx ceiling  same top-k %-5v %s\n",
				t.Name, t.MedianMs, t.GBPerS, t.Ratio, t.SameTopK, t.Note)
		}
		r.scanComparison(w)
	}
}

// phaseWarnings says what the percentiles below leave out or take in: open-
// loop slots never sent (the rate was not sustained; the slots' waits are
// in no percentile, so a stall near the end looks like nothing), and
// failed requests (their latencies are in the figures).
func phaseWarnings(w io.Writer, ph *PhaseResult) {
	if ph.Missed > 0 && ph.Scheduled > 0 {
		fmt.Fprintf(w, "  WARNING: %d of %d slots (%.1f%%) were never sent, every worker busy: the rate was not sustained, "+
			"and the percentiles leave those requests out; raise --concurrency or lower --rate\n",
			ph.Missed, ph.Scheduled, 100*float64(ph.Missed)/float64(ph.Scheduled))
	}
	if ph.Errors > 0 {
		fmt.Fprintf(w, "  note: the latencies include the %d failed requests\n", ph.Errors)
	}
}

// searchedAtoms is how many atoms the searched tenant held: --size, or more
// when it already held more.
func (r *Report) searchedAtoms() int {
	if p := r.Populate; p != nil && p.Tenants == 1 && p.Existing+p.Added > int64(r.Config.Size) {
		return int(p.Existing + p.Added)
	}
	return r.Config.Size
}

// scanComparison relates the search latency to the fastest exact f32 scan
// of the same number of vectors (the bar: p50 no more than it).
func (r *Report) scanComparison(w io.Writer) {
	scan := 0.0
	for _, t := range r.Kernels.Kernels {
		if strings.HasPrefix(t.Name, "vecmath DotArena") || strings.HasPrefix(t.Name, "vecmath, split") {
			if scan == 0 || t.MedianMs < scan {
				scan = t.MedianMs
			}
		}
	}
	for _, ph := range r.Phases {
		if o, ok := ph.Ops[OpSearch]; ok && scan > 0 && r.Kernels.N == r.searchedAtoms() {
			fmt.Fprintf(w, "search   p50 %.2f ms = %.2fx the fastest bare f32 scan of the same %d x %d vectors (%.2f ms)\n",
				o.Latency.P50, o.Latency.P50/scan, r.Kernels.N, r.Kernels.Dim, scan)
		}
	}
}
