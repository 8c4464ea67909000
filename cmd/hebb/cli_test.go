package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	hebb "github.com/hebbdb/hebb/client"
	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/embedder"
	"github.com/hebbdb/hebb/router/vault"
)

const cliAdminToken = "cli-test-admin"

// cliServer is one node started in-process for the CLI tests.
type cliServer struct {
	base  string // REST base
	admin *hebb.AdminClient
}

func startCLIServer(t *testing.T) *cliServer {
	t.Helper()
	emb, err := embedder.New("hash")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := vault.Parse(base64.StdEncoding.EncodeToString(make([]byte, 32)))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := cluster.Start(ctx, cluster.Config{DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0", Groups: 2, Replicas: 1,
		Embedder: emb.Name(), Dim: emb.Dim(), Logger: log})
	if err != nil {
		t.Fatalf("cluster.Start: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = cl.Close()
		t.Fatal(err)
	}
	root := "http://" + ln.Addr().String()
	srv := router.New(router.Config{PublicURL: root, AdminToken: cliAdminToken, Vault: ring, Logger: log}, cl, emb)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = cl.Close()
	})
	admin, err := hebb.NewAdmin(root, cliAdminToken)
	if err != nil {
		t.Fatal(err)
	}
	return &cliServer{base: root + "/api/v1", admin: admin}
}

// newKey creates an account and returns its API key.
func (s *cliServer) newKey(t *testing.T, name string) string {
	t.Helper()
	org, err := s.admin.CreateOrg(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return org.APIKey
}

// cliRun is one command run.
type cliRun struct {
	stdout, stderr string
	err            error
}

// run calls a client command the way main does, with key in HEBB_API_KEY,
// the server in HEBB_URL, stdin and a captured stdout/stderr.
func (s *cliServer) run(key, stdin string, tty bool, args ...string) cliRun {
	var out, errOut bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, stderrTTY: tty,
		getenv: func(k string) string {
			switch k {
			case "HEBB_API_KEY":
				return key
			case "HEBB_URL":
				return s.base
			}
			return ""
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := clientCommand(ctx, env, args[0], args[1:])
	return cliRun{stdout: out.String(), stderr: errOut.String(), err: err}
}

// must fails the test unless the run succeeded, and returns its stdout.
func (r cliRun) must(t *testing.T) string {
	t.Helper()
	if r.err != nil {
		t.Fatalf("command failed: %v\nstderr: %s", r.err, r.stderr)
	}
	return r.stdout
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}

func TestCLIMemoryCommands(t *testing.T) {
	s := startCLIServer(t)
	key := s.newKey(t, "cli-memory")

	out := s.run(key, "", false, "write", "--domain", "prefs", "The user prefers a dark theme").must(t)
	if !strings.HasPrefix(out, "stored ") {
		t.Fatalf("write: %q", out)
	}
	first := strings.Fields(out)[1]
	s.run(key, "Deploys happen on Tuesdays\n", false, "write", "-").must(t)
	res := decodeJSON[hebb.WriteResult](t, s.run(key, "", false, "write", "--json", "--supersedes", first,
		"--domain", "prefs", "--metadata", `{"source":"cli"}`, "The user now prefers a light theme").must(t))
	if !res.Stored || len(res.Superseded) != 1 || res.Superseded[0] != first {
		t.Fatalf("supersede: %+v", res)
	}

	t.Run("read", func(t *testing.T) {
		out := s.run(key, "", false, "read", "--domain", "prefs", "--history", "--min-relevance", "0", "which", "theme").must(t)
		if !strings.Contains(out, "light theme") || !strings.Contains(out, "replaced by "+res.ID()) {
			t.Fatalf("read: %q", out)
		}
		rr := decodeJSON[hebb.ReadResponse](t, s.run(key, "", false, "read", "--json", "--top-k", "1", "deploys tuesdays").must(t))
		if len(rr.Items) == 0 || rr.Items[0].Content != "Deploys happen on Tuesdays" {
			t.Fatalf("read --json: %+v", rr)
		}
	})
	t.Run("recent pages", func(t *testing.T) {
		out := s.run(key, "", false, "recent", "--limit", "2").must(t)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		// The next page's command keeps the filters given (it dropped them,
		// and the suggested command mixed in other domains).
		if len(lines) != 3 || !strings.Contains(lines[0], "light theme") || !strings.HasPrefix(lines[2], "more: hebb recent --limit 2 --cursor ") {
			t.Fatalf("recent: %q", out)
		}
		cursor := strings.Fields(lines[2])[6]
		rest := s.run(key, "", false, "recent", "--limit", "2", "--cursor", cursor).must(t)
		if !strings.Contains(rest, "dark theme") || strings.Contains(rest, "more:") {
			t.Fatalf("second page: %q", rest)
		}
		all := decodeJSON[hebb.RecentResponse](t, s.run(key, "", false, "recent", "--all", "--limit", "1", "--json").must(t))
		if len(all.Items) != 3 || all.NextCursor != nil {
			t.Fatalf("recent --all: %+v", all)
		}
	})
	t.Run("stats", func(t *testing.T) {
		out := s.run(key, "", false, "stats").must(t)
		if !strings.Contains(out, "atoms           3 (episodes 3") || !strings.Contains(out, "general, prefs") {
			t.Fatalf("stats: %q", out)
		}
		st := decodeJSON[hebb.Stats](t, s.run(key, "", false, "stats", "--json").must(t))
		if st.TotalAtoms != 3 {
			t.Fatalf("stats --json: %+v", st)
		}
	})
}

func TestCLIErrors(t *testing.T) {
	s := startCLIServer(t)
	key := s.newKey(t, "cli-errors")
	tests := []struct {
		name string
		key  string
		args []string
		want string
	}{
		{"no key", "", []string{"stats"}, "no API key"},
		{"rejected key", "mk_live_not_a_real_key_000000000000", []string{"stats"}, "401 UNAUTHORIZED"},
		{"validation error", key, []string{"write", "--external-ref", "secret:x", "hello"}, "body.external_ref"},
		{"unknown flag", key, []string{"read", "--nope", "q"}, "flag provided but not defined"},
		{"missing query", key, []string{"read"}, "wrong number of arguments"},
		{"bad metadata", key, []string{"write", "--metadata", "{", "x"}, "not valid JSON"},
		{"unknown rooms command", key, []string{"rooms", "dance"}, `unknown command "dance"`},
		{"bad chunk", key, []string{"import", "--chunk", "501", "f"}, "--chunk must be"},
		{"unknown atom in chain", key, []string{"write", "--supersedes", "00000000-0000-7000-8000-000000000000", "x"}, "404 NOT_FOUND"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.run(tc.key, "", false, tc.args...)
			if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("err %v, want it to mention %q", r.err, tc.want)
			}
		})
	}
	if r := s.run(key, "", false, "stats", "-h"); r.err != nil || !strings.Contains(r.stderr, "-json") {
		t.Fatalf("-h: %v %q", r.err, r.stderr)
	}
}

func TestCLIRoomsAndVault(t *testing.T) {
	s := startCLIServer(t)
	owner, guest := s.newKey(t, "cli-owner"), s.newKey(t, "cli-guest")

	room := decodeJSON[hebb.Room](t, s.run(owner, "", false, "rooms", "create", "--json", "launch").must(t))
	// A value given out of range is refused (0 minted the default invite).
	for _, bad := range [][]string{{"--max-uses", "0"}, {"--max-uses", "1001"}, {"--expires-in-days", "0"}} {
		if r := s.run(owner, "", false, append([]string{"rooms", "invite", room.RoomID}, bad...)...); r.err == nil {
			t.Fatalf("invite %v: %q", bad, r.stdout)
		}
	}
	inv := decodeJSON[hebb.Invite](t, s.run(owner, "", false, "rooms", "invite", room.RoomID, "--scope", "read_write", "--max-uses", "2", "--json").must(t))
	if inv.MaxUses != 2 || !strings.HasPrefix(inv.Code, "mshare_") {
		t.Fatalf("invite: %+v", inv)
	}
	if out := s.run(owner, "", false, "rooms", "invites", room.Address).must(t); !strings.Contains(out, inv.Code) {
		t.Fatalf("invites: %q", out)
	}
	if out := s.run(guest, "", false, "rooms", "join", inv.Code).must(t); !strings.Contains(out, "--domain "+room.Address) {
		t.Fatalf("join: %q", out)
	}
	s.run(guest, "", false, "write", "--domain", room.Address, "Launch is on Friday").must(t)
	if out := s.run(owner, "", false, "read", "--domain", room.Address, "when is the launch").must(t); !strings.Contains(out, "Launch is on Friday") {
		t.Fatalf("owner reads the room: %q", out)
	}
	if out := s.run(guest, "", false, "rooms", "list").must(t); !strings.Contains(out, `"launch"  member, read_write, active`) {
		t.Fatalf("list: %q", out)
	}
	// --json prints a list as the REST API answers it.
	members := decodeJSON[struct{ Members []hebb.Member }](t, s.run(owner, "", false, "rooms", "members", "--json", room.RoomID).must(t)).Members
	if len(members) != 2 {
		t.Fatalf("members: %+v", members)
	}
	var guestOrg string
	for _, m := range members {
		if out := s.run(owner, "", false, "rooms", "members", room.RoomID).must(t); !strings.Contains(out, m.OrgID) {
			t.Fatalf("members text: %q", out)
		}
		if m.OrgID != room.OwnerOrgID {
			guestOrg = m.OrgID
		}
	}
	if out := s.run(owner, "", false, "rooms", "revoke", room.RoomID, guestOrg).must(t); !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: %q", out)
	}
	if out := s.run(owner, "", false, "rooms", "archive", room.RoomID).must(t); !strings.Contains(out, "(archived)") {
		t.Fatalf("archive: %q", out)
	}

	put := s.run(owner, "s3cr3t\n", false, "vault", "put", "--context", "deploy key", "deploy.key").must(t)
	if !strings.HasPrefix(put, "deploy.key ") || strings.Contains(put, "s3cr3t") {
		t.Fatalf("vault put: %q", put)
	}
	if out := s.run(owner, "", false, "vault", "list").must(t); !strings.Contains(out, "deploy key") || strings.Contains(out, "s3cr3t") {
		t.Fatalf("vault list: %q", out)
	}
	if out := s.run(owner, "", false, "vault", "list", "--json").must(t); len(decodeJSON[struct{ Secrets []hebb.Secret }](t, out).Secrets) != 1 {
		t.Fatalf("vault list --json: %q", out)
	}
	if out := s.run(guest, "", false, "vault", "list", "--json").must(t); strings.Join(strings.Fields(out), "") != `{"secrets":[]}` {
		t.Fatalf("vault list --json with none: %q", out)
	}
	got := decodeJSON[hebb.Secret](t, s.run(owner, "", false, "vault", "get", "deploy.key", "--json").must(t))
	if got.Alias != "deploy.key" || got.Context != "deploy key" {
		t.Fatalf("vault get: %+v", got)
	}
	if r := s.run(owner, "", false, "vault", "get", "nope"); !errors.Is(r.err, hebb.ErrNotFound) {
		t.Fatalf("vault get unknown: %v", r.err)
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantPos []string
		wantX   string
		wantB   bool
	}{
		{"flags first", []string{"-x", "1", "a", "b"}, []string{"a", "b"}, "1", false},
		{"flags after", []string{"a", "--x", "2", "b", "-b"}, []string{"a", "b"}, "2", true},
		{"double dash", []string{"a", "--", "-x", "--b"}, []string{"a", "-x", "--b"}, "", false},
		{"stdin dash", []string{"-", "-b"}, []string{"-"}, "", true},
		{"none", nil, nil, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			x := fs.String("x", "", "")
			b := fs.Bool("b", false, "")
			pos, err := parseArgs(fs, tc.args)
			if err != nil || strings.Join(pos, "|") != strings.Join(tc.wantPos, "|") || *x != tc.wantX || *b != tc.wantB {
				t.Fatalf("got %q x=%q b=%v err %v", pos, *x, *b, err)
			}
		})
	}
}

func TestFormatting(t *testing.T) {
	f := func(n int64, want string) {
		t.Helper()
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
	f(0, "0 B")
	f(999, "999 B")
	f(1000, "1.0 kB")
	f(3_400_000, "3.4 MB")
	if got := oneLine("a\n  b\tc", 10); got != "a b c" {
		t.Errorf("oneLine = %q", got)
	}
	if got := oneLine("abcdefghijkl", 5); got != "abcd…" {
		t.Errorf("oneLine = %q", got)
	}
	var buf bytes.Buffer
	p := &progress{w: &buf, on: true, label: "x"}
	p.show(5, 10, "5 atoms", true)
	p.clear()
	if !strings.Contains(buf.String(), "[############------------] 5 atoms") {
		t.Errorf("progress drew %q", buf.String())
	}
	off := &progress{w: &buf, on: false}
	buf.Reset()
	off.show(1, 2, "x", true)
	off.clear()
	if buf.Len() != 0 {
		t.Errorf("progress off drew %q", buf.String())
	}
}

// TestRecentAllKeepsWhatItRead: hebb recent --all prints each page as it
// comes and, when a later page fails (here the daily query quota), says
// how to go on; it printed nothing, and no cursor.
func TestRecentAllKeepsWhatItRead(t *testing.T) {
	s := startCLIServer(t)
	ctx := context.Background()
	org, err := s.admin.CreateOrg(ctx, "recent-all")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Alpha fact about kites", "Bravo fact about lanterns", "Charlie fact about rivers",
		"Delta fact about mountains", "Echo fact about deserts"} {
		s.run(org.APIKey, "", false, "write", text).must(t)
	}
	if _, err := s.admin.UpdateSettings(ctx, org.OrgID, hebb.SettingsUpdate{Plan: &hebb.PlanUpdate{DailyQueryQuota: hebb.Ptr[int64](2)}}); err != nil {
		t.Fatal(err)
	}
	r := s.run(org.APIKey, "", false, "recent", "--all", "--limit", "2")
	if r.err == nil || strings.Count(r.stdout, "fact about") != 4 || !strings.Contains(r.err.Error(), "--all --limit 2 --cursor ") {
		t.Fatalf("recent --all past the quota: err %v\nstdout %q", r.err, r.stdout)
	}
}
