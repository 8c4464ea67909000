package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// hebbBin is the binary built once by TestMain.
var hebbBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hebb-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot make temp dir:", err)
		os.Exit(1)
	}
	hebbBin = filepath.Join(dir, "hebb")
	build := exec.Command("go", "build", "-o", hebbBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot build hebb:", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("cannot find a free port: %v", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine of exec.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// node is one `hebb serve` process.
type node struct {
	t        *testing.T
	dataDir  string
	httpAddr string
	cmd      *exec.Cmd
	stdout   *syncBuffer
	stderr   *syncBuffer
	done     chan struct{}
	waitErr  error
}

// spec says how to start a node. Zero values get fresh addresses; an empty
// httpAddr with env HEBB_HTTP_ADDR set leaves --http-addr off.
type spec struct {
	dataDir  string
	httpAddr string // "" = a free port passed as --http-addr
	noHTTP   bool   // do not pass --http-addr (the env decides)
	env      []string
	args     []string
}

// launch starts `hebb serve` and returns without waiting for readiness.
func launch(t *testing.T, s spec) *node {
	t.Helper()
	if s.dataDir == "" {
		s.dataDir = t.TempDir()
	}
	n := &node{t: t, dataDir: s.dataDir, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	args := []string{"serve", "--data-dir", s.dataDir, "--raft-addr", freeAddr(t), "--gossip-addr", freeAddr(t),
		"--chat-addr", freeAddr(t), "--groups", "2"}
	if !s.noHTTP {
		if s.httpAddr == "" {
			s.httpAddr = freeAddr(t)
		}
		args = append(args, "--http-addr", s.httpAddr)
	}
	n.httpAddr = s.httpAddr
	args = append(args, s.args...)
	n.cmd = exec.Command(hebbBin, args...)
	n.cmd.Env = append(cleanEnv(), s.env...)
	n.cmd.Stdout, n.cmd.Stderr = n.stdout, n.stderr
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("cannot start hebb: %v", err)
	}
	go func() {
		n.waitErr = n.cmd.Wait()
		close(n.done)
	}()
	t.Cleanup(func() {
		select {
		case <-n.done:
		default:
			_ = n.cmd.Process.Kill()
			<-n.done
		}
		if t.Failed() {
			t.Logf("hebb stdout:\n%s\nhebb stderr:\n%s", n.stdout, n.stderr)
		}
	})
	return n
}

// cleanEnv is the test's environment without HEBB_ variables.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HEBB_") && !strings.HasPrefix(kv, "MNEMOVERSE_") {
			out = append(out, kv)
		}
	}
	return out
}

// start launches a node and waits until /health/ready reports ready.
func start(t *testing.T, s spec) *node {
	t.Helper()
	var err error
	n := relaunched(t, s, func(n *node) { err = n.awaitReady() })
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// refused launches a node expected to refuse to start and waits for its
// exit code.
func refused(t *testing.T, s spec) (*node, int) {
	t.Helper()
	var code int
	n := relaunched(t, s, func(n *node) { code = n.wait(30 * time.Second) })
	return n, code
}

// relaunched launches a node and runs settle on it. A node that exited
// because a port picked by freeAddr was taken in between (by another
// test's process or connection: the ephemeral range) is launched again on
// fresh ports and, unless the test chose one, a fresh data dir; the last
// launch is returned.
func relaunched(t *testing.T, s spec, settle func(*node)) *node {
	t.Helper()
	for attempt := 1; ; attempt++ {
		n := launch(t, s)
		settle(n)
		if !n.portTaken() || attempt == launchAttempts {
			return n
		}
	}
}

// launchAttempts bounds the relaunches of a node whose port was taken.
const launchAttempts = 3

// portTaken reports whether the node exited because an address it was
// given to listen on was in use.
func (n *node) portTaken() bool {
	select {
	case <-n.done:
		return strings.Contains(n.stderr.String(), "address already in use")
	default:
		return false
	}
}

var client = &http.Client{Timeout: 10 * time.Second}

// awaitReady polls /health/ready for up to 30 s; the error says why the node
// never became ready.
func (n *node) awaitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-n.done:
			return fmt.Errorf("hebb exited before it was ready: %v\nstderr:\n%s", n.waitErr, n.stderr)
		default:
		}
		if n.httpAddr != "" {
			res, err := client.Get("http://" + n.httpAddr + "/health/ready")
			if err == nil {
				var body struct {
					Ready bool `json:"ready"`
				}
				_ = json.NewDecoder(res.Body).Decode(&body)
				_ = res.Body.Close()
				if body.Ready {
					return nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("hebb not ready after 30s\nstderr:\n%s", n.stderr)
}

// wait waits for the process to exit on its own and returns its exit code.
func (n *node) wait(timeout time.Duration) int {
	n.t.Helper()
	select {
	case <-n.done:
	case <-time.After(timeout):
		n.t.Fatalf("hebb still running after %v", timeout)
	}
	var ee *exec.ExitError
	if errors.As(n.waitErr, &ee) {
		return ee.ExitCode()
	}
	if n.waitErr != nil {
		n.t.Fatalf("wait: %v", n.waitErr)
	}
	return 0
}

// stop sends sig and returns the exit code.
func (n *node) stop(sig syscall.Signal) int {
	n.t.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil {
		n.t.Fatalf("signal: %v", err)
	}
	if sig == syscall.SIGKILL {
		<-n.done
		return -1
	}
	return n.wait(15 * time.Second)
}

var keyRE = regexp.MustCompile(`mk_live_[A-Za-z0-9_-]{24,}`)

// printedKey returns the API key printed on stdout (and fails unless exactly
// one was printed, once).
func (n *node) printedKey() string {
	n.t.Helper()
	keys := keyRE.FindAllString(n.stdout.String(), -1)
	if len(keys) != 1 {
		n.t.Fatalf("want the key printed once on stdout, got %d: %q", len(keys), n.stdout.String())
	}
	return keys[0]
}

// call sends a JSON request with the API key and decodes a JSON answer.
func (n *node) call(method, path, key string, body any) (int, map[string]any) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			n.t.Fatalf("encode: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+n.httpAddr+"/api/v1"+path, rd)
	if err != nil {
		n.t.Fatalf("request: %v", err)
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	res, err := client.Do(req)
	if err != nil {
		n.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// write stores content and returns the atom ID.
func (n *node) write(key, content string) string {
	n.t.Helper()
	st, body := n.call("POST", "/memory/write", key, map[string]any{"content": content})
	if st != 200 || body["stored"] != true {
		n.t.Fatalf("write: %d %v", st, body)
	}
	return body["atom_id"].(string)
}

func (n *node) mustGet(key, id string) {
	n.t.Helper()
	st, body := n.call("GET", "/memory/atoms/"+id, key, nil)
	if st != 200 || body["atom_id"] != id {
		n.t.Fatalf("atom %s: %d %v", id, st, body)
	}
}

func TestE2ELifecycle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := start(t, spec{dataDir: dir})
	key := n.printedKey()
	if !strings.Contains(n.stdout.String(), "shown once") {
		t.Errorf("first-start message: %q", n.stdout.String())
	}
	id := n.write(key, "Written before a graceful stop")
	if st, _ := n.call("GET", "/memory/stats", key, nil); st != 200 {
		t.Fatalf("stats: %d", st)
	}
	began := time.Now()
	if code := n.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM exit code %d", code)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("SIGTERM took %v", d)
	}

	n = start(t, spec{dataDir: dir})
	if keyRE.MatchString(n.stdout.String()) {
		t.Errorf("second start printed a key: %q", n.stdout.String())
	}
	n.mustGet(key, id)
	if code := n.stop(syscall.SIGINT); code != 0 {
		t.Fatalf("SIGINT exit code %d", code)
	}

	// The data dir was made with the default embedder, builtin.
	n, code := refused(t, spec{dataDir: dir, args: []string{"--embedder", "hash"}})
	if code == 0 {
		t.Fatal("restart with another embedder exited 0")
	}
	if msg := n.stderr.String(); !strings.Contains(msg, "embedder") || !strings.Contains(msg, "builtin") {
		t.Errorf("embedder mismatch message: %q", msg)
	}
}

func TestE2EKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := start(t, spec{dataDir: dir, args: []string{"--embedder", "hash"}})
	key := n.printedKey()
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = n.write(key, fmt.Sprintf("Acknowledged write %d about subject %d", i, i*31))
	}
	n.stop(syscall.SIGKILL)
	n = start(t, spec{dataDir: dir, args: []string{"--embedder", "hash"}})
	for _, id := range ids {
		n.mustGet(key, id)
	}
	if st, body := n.call("GET", "/memory/stats", key, nil); st != 200 || body["total_atoms"] != 50.0 {
		t.Errorf("stats after kill: %d %v", st, body)
	}
	if code := n.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM exit code %d", code)
	}
}

// A port that is taken stops serve before it touches the data dir: no
// cluster is bootstrapped and no first-start key is printed and lost.
func TestE2ETakenPort(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, flag := range []string{"--http-addr", "--chat-addr", "--metrics-addr"} {
		dir := t.TempDir()
		n := launch(t, spec{dataDir: dir, args: []string{flag, held.Addr().String()}})
		if code := n.wait(30 * time.Second); code == 0 {
			t.Fatalf("%s taken: exit code 0", flag)
		}
		if msg := n.stderr.String(); !strings.Contains(msg, "cannot listen on "+flag) {
			t.Errorf("%s taken: message %q", flag, msg)
		}
		if keyRE.MatchString(n.stdout.String()) {
			t.Errorf("%s taken: a first-start key was printed", flag)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s taken: the data dir was written: %v", flag, entries)
		}
	}
}

func TestE2EBootstrapKeyAndEnv(t *testing.T) {
	t.Parallel()
	t.Run("bootstrap key and HEBB_HTTP_ADDR", func(t *testing.T) {
		addr := freeAddr(t)
		key := "mk_live_" + "b00tstrapKeyForTheE2eTest_x9"
		n := start(t, spec{noHTTP: true, httpAddr: addr,
			env: []string{"HEBB_HTTP_ADDR=" + addr, "HEBB_BOOTSTRAP_API_KEY=" + key, "HEBB_EMBEDDER=hash"}})
		if keyRE.MatchString(n.stdout.String()) {
			t.Errorf("a bootstrap key was printed: %q", n.stdout.String())
		}
		if st, _ := n.call("GET", "/memory/stats", key, nil); st != 200 {
			t.Errorf("bootstrap key refused: %d", st)
		}
		if code := n.stop(syscall.SIGTERM); code != 0 {
			t.Errorf("exit code %d", code)
		}
	})
	t.Run("flag beats env", func(t *testing.T) {
		envAddr, flagAddr := freeAddr(t), freeAddr(t)
		n := start(t, spec{httpAddr: flagAddr, env: []string{"HEBB_HTTP_ADDR=" + envAddr}})
		if _, err := client.Get("http://" + envAddr + "/health"); err == nil {
			t.Errorf("env address serves although --http-addr was given")
		}
		if code := n.stop(syscall.SIGTERM); code != 0 {
			t.Errorf("exit code %d", code)
		}
	})
	// Refused before the data dir is touched (a retry with other --groups
	// used to find the cluster the refused start had written), with the
	// reason it is refused for.
	t.Run("malformed bootstrap key", func(t *testing.T) {
		for _, c := range []struct{ bad, reason string }{
			{"mk_live_short", "at least 24"},
			{"mk_live_YOUR_API_KEY", "documentation stand-in"},
			{"mk_live_" + strings.Repeat("k3yBody", 20) + "abcdefghij", "at most 128"},
		} {
			dir := t.TempDir()
			n, code := refused(t, spec{dataDir: dir, env: []string{"HEBB_BOOTSTRAP_API_KEY=" + c.bad}})
			if code == 0 {
				t.Errorf("%q: exit code 0", c.bad)
			}
			msg := n.stderr.String()
			if !strings.Contains(msg, "HEBB_BOOTSTRAP_API_KEY") || !strings.Contains(msg, c.reason) {
				t.Errorf("%q: message does not name the variable and %q: %q", c.bad, c.reason, msg)
			}
			if strings.Contains(n.stdout.String()+msg, c.bad) {
				t.Errorf("%q: the rejected key is echoed", c.bad)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("%q: the refused start wrote the data dir: %v", c.bad, entries)
			}
		}
	})
}

func TestE2EResetRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := start(t, spec{dataDir: dir, args: []string{"--admin-token", "adm", "--enable-reset"}})
	// One org: reset is allowed.
	req, _ := http.NewRequest("POST", "http://"+n.httpAddr+"/admin/v1/orgs", strings.NewReader(`{"name":"second"}`))
	req.Header.Set("X-Admin-Token", "adm")
	res, err := client.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("create org: %v %v", err, res)
	}
	_ = res.Body.Close()
	if code := n.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	n, code := refused(t, spec{dataDir: dir, args: []string{"--admin-token", "adm", "--enable-reset"}})
	if code == 0 {
		t.Fatal("--enable-reset with two orgs exited 0")
	}
	if !strings.Contains(n.stderr.String(), "--enable-reset") {
		t.Errorf("message does not name the flag: %q", n.stderr.String())
	}
	// Without the flag the same data dir starts.
	n = start(t, spec{dataDir: dir})
	if code := n.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// --metrics-addr serves Prometheus' text format, from the start.
func TestE2EMetricsAddr(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	n := start(t, spec{args: []string{"--metrics-addr", addr}})
	res, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "go_goroutines") || !strings.Contains(string(body), "hebb_") {
		t.Errorf("GET /metrics: %d, %d bytes without go_goroutines or hebb_ metrics", res.StatusCode, len(body))
	}
	// That listener serves nothing else.
	res, err = client.Get("http://" + addr + "/api/v1/memory/stats")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("GET /api/v1/memory/stats on the metrics listener: %d, want 404", res.StatusCode)
	}
	// Moved, not copied: the REST listener no longer serves it (an operator
	// moves it off a public interface).
	res, err = client.Get("http://" + n.httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("GET /metrics on the REST listener: %d, want 404", res.StatusCode)
	}
	if code := n.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM exit code %d", code)
	}
}

// A stop signal or a crash at any moment of a first start is a stop: exit
// 0 for a signal, and the data dir starts again (it finishes the bootstrap)
// with the default org's key printed once over the two runs.
func TestE2EStoppedWhileStarting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		after time.Duration
		sig   syscall.Signal
	}{{250 * time.Millisecond, syscall.SIGTERM}, {500 * time.Millisecond, syscall.SIGTERM},
		{150 * time.Millisecond, syscall.SIGKILL}, {400 * time.Millisecond, syscall.SIGKILL}} {
		dir := t.TempDir()
		first := launch(t, spec{dataDir: dir, args: []string{"--embedder", "hash"}})
		time.Sleep(c.after)
		if code := first.stop(c.sig); c.sig == syscall.SIGTERM && code != 0 {
			t.Errorf("%v after %v: exit code %d\n%s", c.sig, c.after, code, first.stderr)
		}
		n := start(t, spec{dataDir: dir, args: []string{"--embedder", "hash"}})
		keys := keyRE.FindAllString(first.stdout.String()+n.stdout.String(), -1)
		if len(keys) != 1 {
			t.Fatalf("%v after %v: %d keys printed over the two starts", c.sig, c.after, len(keys))
		}
		if st, _ := n.call("GET", "/memory/stats", keys[0], nil); st != 200 {
			t.Errorf("%v after %v: stats with the printed key: %d", c.sig, c.after, st)
		}
		if _, err := os.Stat(filepath.Join(dir, "bootstrapping")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v after %v: the bootstrap marker is left: %v", c.sig, c.after, err)
		}
		if code := n.stop(syscall.SIGTERM); code != 0 {
			t.Errorf("SIGTERM of the restarted node: %d", code)
		}
	}
}

// SIGTERM while the data groups start ends the start there and exits 0:
// the start went on opening every group first (11 s at 3,000 groups, and
// the signal never took effect at 100,000).
func TestE2EStoppedWhileStartingGroups(t *testing.T) {
	t.Parallel()
	const groups = cluster.MaxGroups
	dir := t.TempDir()
	n := launch(t, spec{dataDir: dir, args: []string{"--groups", strconv.Itoa(groups), "--embedder", "hash"}})
	first := filepath.Join(dir, "raft", "group-1")
	for {
		if _, err := os.Stat(first); err == nil {
			break
		}
		select {
		case <-n.done:
			t.Fatalf("hebb exited before its data groups started: %v\n%s", n.waitErr, n.stderr)
		case <-time.After(time.Millisecond):
		}
	}
	if code := n.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM during the start of the groups: exit code %d\n%s", code, n.stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(dir, "raft", "group-*"))
	if started := len(dirs) - 1; started >= groups/2 { // group-0 is the meta group
		t.Errorf("%d of %d data groups started after SIGTERM", started, groups)
	}
}

// A bad HEBB_VAULT_KEY is refused before the cluster is created: the data
// dir holds no Raft state and no key was printed (it used to print the
// default org's key, then refuse, leaving a bootstrapped cluster).
func TestE2EBadVaultKeyRefusedFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n, code := refused(t, spec{dataDir: dir, env: []string{"HEBB_VAULT_KEY=abc"}})
	if code == 0 || !strings.Contains(n.stderr.String(), "vault") {
		t.Fatalf("exit %d, stderr %q", code, n.stderr)
	}
	if keyRE.MatchString(n.stdout.String()) {
		t.Errorf("a key was printed before the refusal: %q", n.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "raft")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused start created Raft state: %v", err)
	}
}
