package bench

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// LocalServer is a `hebb serve` child process on free loopback ports with a
// throw-away data directory, the hash embedder and no query quota.
type LocalServer struct {
	URL        string // REST base
	Key        string // API key of the bootstrapped org
	AdminToken string
	Flags      string // the serve flags that matter, for the report
	dir        string
	cmd        *exec.Cmd
	exited     chan error
}

// StartLocalServer runs binary (a hebb executable) as `serve` and waits until
// /health/ready reports ready. Its log goes to <data dir>/server.log.
func StartLocalServer(ctx context.Context, binary string) (*LocalServer, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hebb-bench-")
	if err != nil {
		return nil, fmt.Errorf("cannot make a data dir: %w", err)
	}
	s := &LocalServer{dir: dir, Key: "mk_live_" + randomToken(24), AdminToken: randomToken(16), exited: make(chan error, 1)}
	addr := func(p int) string { return fmt.Sprintf("127.0.0.1:%d", p) }
	args := []string{"serve", "--data-dir", filepath.Join(dir, "data"), "--http-addr", addr(ports[0]),
		"--raft-addr", addr(ports[1]), "--gossip-addr", addr(ports[2]), "--chat-addr=", "--embedder", "hash",
		"--daily-query-quota", "0", "--atom-limit", "0"}
	s.Flags = "--embedder hash --daily-query-quota 0 --atom-limit 0 --admin-token <random> (free loopback ports, temporary data dir)"
	s.URL = "http://" + addr(ports[0]) + "/api/v1"
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot create the server log: %w", err)
	}
	defer logf.Close()
	s.cmd = exec.Command(binary, args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	// Secrets in the environment, not on a command line every local user
	// can read in ps.
	s.cmd.Env = append(os.Environ(), "HEBB_BOOTSTRAP_API_KEY="+s.Key, "HEBB_ADMIN_TOKEN="+s.AdminToken)
	if err := startChild(s.cmd); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot start %s: %w", binary, err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	if err := s.waitReady(ctx, 90*time.Second); err != nil {
		log := s.logTail()
		_ = s.Stop()
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, log)
	}
	return s, nil
}

// waitReady polls /health/ready until every check passes.
func (s *LocalServer) waitReady(ctx context.Context, limit time.Duration) error {
	api, err := NewAPI(s.URL, "", 1, 2*time.Second)
	if err != nil {
		return err
	}
	err = awaitReady(ctx, api, limit, func() error {
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("%w before it was ready: %v", ErrServerExited, err)
		default:
			return nil
		}
	})
	if errors.Is(err, ErrNotReady) {
		return fmt.Errorf("%w: %w", ErrServerExited, err)
	}
	return err
}

// Stop ends the server (SIGTERM, then SIGKILL after 30 s) and removes its
// data directory.
func (s *LocalServer) Stop() error {
	defer os.RemoveAll(s.dir)
	if s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		s.exited <- err
		return exitError(err)
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		return fmt.Errorf("local server did not stop within 30 s; killed: %w", exitError(<-s.exited))
	}
}

// exitError ignores the exit caused by our own signal.
func exitError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return nil
		}
	}
	return err
}

func (s *LocalServer) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// freePorts returns n distinct loopback TCP ports free at the time of the
// call (another process may take one before the server binds it).
func freePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("cannot find a free port: %w", err)
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}
