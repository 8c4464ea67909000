package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// simPhase runs a short simulated phase: 20 slots a second for 1 s, each
// answered in 30 ms, one op in four a "write"; the searches read the 12.5 ms
// the server reports.
func simPhase(t *testing.T) *PhaseResult {
	t.Helper()
	clk := &simClock{now: time.Unix(1_700_000_000, 0)}
	srv := &slowServer{clk: clk, service: 30 * time.Millisecond, failEvery: 7,
		body: []byte(`{"items":[],"search_time_ms":12.5}`)}
	gen := func(i uint64) Request {
		if i%4 == 0 {
			return Request{Op: OpWrite}
		}
		return Request{Op: OpSearch, ServerTime: searchTime}
	}
	ph, err := RunLoad(context.Background(), srv, gen,
		LoadConfig{Name: "sim", Rate: 20, Duration: time.Second, Concurrency: 1, clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return ph
}

func TestReportWrite(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cfg := DefaultConfig()
	tests := []struct {
		name    string
		report  *Report
		wantPNG bool
	}{
		{name: "load phase", wantPNG: true, report: &Report{Tool: "hebb bench", Workload: WorkloadSearch,
			StartedAt: start, Config: cfg.reportConfig(), Git: gitInfo(), Machine: hostMachine(),
			Server: &ServerInfo{URL: "http://x/api/v1", Version: "1.0.0"}, Phases: []*PhaseResult{simPhase(t)}}},
		{name: "no request completed", report: &Report{Tool: "hebb bench", Workload: WorkloadWrite,
			StartedAt: start, Config: cfg.reportConfig(), Git: gitInfo(), Machine: hostMachine(),
			Phases: []*PhaseResult{{Name: "write", Mode: ModeOpen, rec: NewRecorder(start)}}}},
		{name: "kernels only", report: &Report{Tool: "hebb bench", Workload: WorkloadKernels,
			StartedAt: start, Git: gitInfo(), Machine: hostMachine(),
			Kernels: &KernelResult{N: 10, Dim: 4, K: 1, Runs: 1, Kernels: []KernelTiming{{Name: "x", Ratio: 1}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			jsonPath, pngPath, err := tc.report.Write(dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, tc.report.Workload+"-20260102T030405Z.json"); jsonPath != want {
				t.Errorf("json path %s, want %s", jsonPath, want)
			}
			// A second report of the same second does not overwrite the first.
			again, againPNG, err := tc.report.Write(dir)
			if want := filepath.Join(dir, tc.report.Workload+"-20260102T030405Z-2.json"); err != nil || again != want {
				t.Errorf("second report at %s (%v), want %s", again, err, want)
			}
			if tc.wantPNG && againPNG != strings.TrimSuffix(again, ".json")+".png" {
				t.Errorf("second plot at %s", againPNG)
			}
			raw, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("report is not JSON: %v", err)
			}
			for _, k := range []string{"tool", "workload", "started_at", "config", "git", "machine"} {
				if _, ok := got[k]; !ok {
					t.Errorf("report lacks %q", k)
				}
			}
			m, _ := got["machine"].(map[string]any)
			for _, k := range []string{"cpu_model", "cores", "goos", "goarch"} {
				if _, ok := m[k]; !ok {
					t.Errorf("machine lacks %q", k)
				}
			}
			if !tc.wantPNG {
				if pngPath != "" {
					t.Errorf("a report without phases got a plot %s", pngPath)
				}
				return
			}
			checkPhaseJSON(t, got)
			png, err := os.ReadFile(pngPath)
			if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("plot %s is not a PNG (%v)", pngPath, err)
			}
		})
	}
}

// checkPhaseJSON checks the figures of simPhase as decoded from JSON.
func checkPhaseJSON(t *testing.T, report map[string]any) {
	t.Helper()
	phases, _ := report["phases"].([]any)
	if len(phases) != 1 {
		t.Fatalf("%d phases in the report", len(phases))
	}
	ph, _ := phases[0].(map[string]any)
	if ph["mode"] != ModeOpen || ph["completed"] != 20.0 || ph["errors"] != 2.0 {
		t.Errorf("phase mode %v completed %v errors %v, want open-loop, 20, 2", ph["mode"], ph["completed"], ph["errors"])
	}
	if codes, _ := ph["errors_by_code"].(map[string]any); codes["503"] != 2.0 {
		t.Errorf("errors_by_code %v, want 503: 2", codes)
	}
	ops, _ := ph["ops"].(map[string]any)
	search, _ := ops[OpSearch].(map[string]any)
	lat, _ := search["latency"].(map[string]any)
	for _, k := range []string{"count", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "max_ms"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("search latency lacks %q: %v", k, lat)
		}
	}
	if lat["count"] != 15.0 || !near(lat["p99_ms"].(float64), 30) {
		t.Errorf("search latency %v, want 15 requests of 30 ms", lat)
	}
	// The two 503s (calls 7 and 14) were searches: they report no time.
	if st, _ := search["server_time"].(map[string]any); st["count"] != 13.0 || !near(st["p50_ms"].(float64), 12.5) {
		t.Errorf("search server_time %v, want 13 answers of 12.5 ms", st)
	}
	if write, _ := ops[OpWrite].(map[string]any); write["server_time"] != nil {
		t.Errorf("writes got a server time: %v", write)
	}
	if tl, _ := ph["timeline"].([]any); len(tl) == 0 {
		t.Error("phase has no timeline")
	}
}

func TestReportSummary(t *testing.T) {
	rep := &Report{Workload: WorkloadSearch, Git: GitInfo{Commit: "abc"}, Machine: hostMachine(),
		Populate: &PopulateResult{Tenants: 1, Target: 10, Added: 10}, Phases: []*PhaseResult{simPhase(t)},
		Floor:     &Latency{Count: 500, P50: 0.2, P90: 0.3, P99: 0.7, Max: 2},
		IdleFloor: &Latency{Count: 500, P50: 0.4, P90: 0.5, P99: 1.5, Max: 3},
		Kernels:   &KernelResult{N: 10, Dim: 4, K: 1, Runs: 1, Kernels: []KernelTiming{{Name: "vecmath", Ratio: 0.9}}}}
	rep.Phases[0].ServerCPU = &ServerCPU{Seconds: 1.5, Cores: 1.25, PerRequestUs: 75}
	batched := simPhase(t)
	batched.ItemsPerRequest, batched.ServerCPU = 500, &ServerCPU{Seconds: 30, Cores: 1.7, PerRequestUs: 80_000, PerItemUs: 160}
	rep.Phases = append(rep.Phases, batched)
	var b strings.Builder
	rep.Summary(&b)
	for _, want := range []string{"hebb bench search", "populate", "open loop 20/s", "search", "(service)", "(server)", "500 round trips: p50 0.20 ms", "1 ms idle: p50 0.40 ms", "vecmath", "0.90x ceiling",
		"server CPU 1.5 s: 1.25 cores busy, 75 µs per request", "server CPU 30.0 s: 1.70 cores busy, 160 µs per item"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

func TestProcField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpuinfo")
	if err := os.WriteFile(path, []byte("processor\t: 0\nmodel name\t: Test CPU @ 3GHz\nflags\t: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := func(keys []string, want string) {
		t.Helper()
		if got := procField(path, keys...); got != want {
			t.Errorf("procField(%v) = %q, want %q", keys, got, want)
		}
	}
	f([]string{"model name"}, "Test CPU @ 3GHz")
	f([]string{"Hardware", "flags"}, "x")
	f([]string{"missing"}, "")
	if got := procField(filepath.Join(t.TempDir(), "none"), "x"); got != "" {
		t.Errorf("missing file gave %q", got)
	}
}

// The commit the build stamps (make build) wins over the working
// directory's git, whose checkout may not be the binary's.
func TestGitInfoStamped(t *testing.T) {
	old, oldDirty := buildCommit, buildDirty
	defer func() { buildCommit, buildDirty = old, oldDirty }()
	buildCommit, buildDirty = "0123456789abcdef0123456789abcdef01234567", "true"
	if g := gitInfo(); g.Commit != buildCommit || !g.Dirty {
		t.Fatalf("stamped build: got %+v", g)
	}
	buildDirty = ""
	if g := gitInfo(); g.Commit != buildCommit || g.Dirty {
		t.Fatalf("stamped clean build: got %+v", g)
	}
	buildCommit = ""
	if g := gitInfo(); g.Commit == "" {
		t.Fatalf("unstamped build: empty commit, want git's, the build information's or %q", "unknown")
	}
}

// A phase whose requests mostly failed is no measurement: the run says so.
func TestMostFailed(t *testing.T) {
	ok := &Report{Phases: []*PhaseResult{{Name: "search", Completed: 100, Errors: 50}}}
	if err := ok.mostFailed(); err != nil {
		t.Errorf("half failed: %v", err)
	}
	bad := &Report{Phases: []*PhaseResult{{Name: "search", Completed: 13606, Errors: 13600,
		ErrorsByCode: map[string]int64{"429": 13600}}}}
	if err := bad.mostFailed(); !errors.Is(err, ErrMostFailed) || !strings.Contains(err.Error(), "429") {
		t.Errorf("13600 of 13606 failed: %v", err)
	}
}

// A tenant that already held more than --size is searched whole: the bare
// scan it is compared with is of as many vectors (it was of --size).
func TestScanComparisonUsesTenantSize(t *testing.T) {
	rep := &Report{Workload: WorkloadSearch, Config: ReportConfig{Size: 2000},
		Populate: &PopulateResult{Tenants: 1, Target: 2000, Existing: 41204},
		Phases:   []*PhaseResult{{Name: "search", Ops: map[string]OpResult{OpSearch: {Latency: Latency{P50: 0.5}}}}},
		Kernels:  &KernelResult{N: 41204, Dim: 384, Kernels: []KernelTiming{{Name: "vecmath DotArena+TopK", MedianMs: 2}}}}
	if got := rep.searchedAtoms(); got != 41204 {
		t.Fatalf("searchedAtoms = %d, want the tenant's 41204", got)
	}
	var b strings.Builder
	rep.scanComparison(&b)
	if !strings.Contains(b.String(), "0.25x the fastest bare f32 scan of the same 41204 x 384") {
		t.Errorf("comparison %q", b.String())
	}
	rep.Kernels.N = 2000 // a scan of fewer vectors than were searched: no comparison
	b.Reset()
	rep.scanComparison(&b)
	if b.Len() != 0 {
		t.Errorf("compared with a scan of --size: %q", b.String())
	}
}

// Outside hebb's checkout an unstamped binary does not take the working
// directory's repository's HEAD for its commit.
func TestGitInfoOtherRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	old := buildCommit
	defer func() { buildCommit = old }()
	buildCommit = ""
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if g := gitInfo(); g.Commit == strings.TrimSpace(string(head)) {
		t.Errorf("commit %s is the other repository's HEAD", g.Commit)
	}
}

// A phase that did not sustain its rate, or had failures, says so above
// its percentiles.
func TestPhaseWarnings(t *testing.T) {
	var b strings.Builder
	phaseWarnings(&b, &PhaseResult{Scheduled: 18000, Missed: 10059, Errors: 3})
	if !strings.Contains(b.String(), "10059 of 18000 slots (55.9%) were never sent") || !strings.Contains(b.String(), "3 failed") {
		t.Errorf("warnings %q", b.String())
	}
	b.Reset()
	phaseWarnings(&b, &PhaseResult{Scheduled: 100})
	if b.Len() != 0 {
		t.Errorf("warnings for a clean phase: %q", b.String())
	}
}
