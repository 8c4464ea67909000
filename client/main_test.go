package client_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/hebbdb/hebb/client"
	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/embedder"
	"github.com/hebbdb/hebb/router/vault"
)

// The examples run against a real node started in-process by TestMain
// (test code may import the server; the client package itself never does).
var (
	rootURL    string // http://127.0.0.1:port
	baseURL    string // rootURL + /api/v1
	adminToken = "example-admin-token"
)

func TestMain(m *testing.M) {
	stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot start the test server:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startServer runs one node (hash embedder, two groups, admin API and
// vault on) on a temp dir and loopback ports.
func startServer() (stop func(), err error) {
	dir, err := os.MkdirTemp("", "hebb-client-test-")
	if err != nil {
		return nil, err
	}
	emb, err := embedder.New("hash")
	if err != nil {
		return nil, err
	}
	ring, err := vault.Parse(base64.StdEncoding.EncodeToString(make([]byte, 32)))
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := cluster.Start(ctx, cluster.Config{DataDir: dir, RaftAddr: "127.0.0.1:0", Groups: 2, Replicas: 1,
		Embedder: emb.Name(), Dim: emb.Dim(), Logger: log})
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = cl.Close()
		return nil, err
	}
	rootURL = "http://" + ln.Addr().String()
	baseURL = rootURL + "/api/v1"
	srv := router.New(router.Config{PublicURL: rootURL, AdminToken: adminToken, Vault: ring, Logger: log}, cl, emb)
	go func() { _ = srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = cl.Close()
		_ = os.RemoveAll(dir)
	}, nil
}

// exampleKey stands for your API key. Each example gets a fresh account,
// made through the admin API, so that their outputs do not mix.
func exampleKey(name string) string {
	admin, err := client.NewAdmin(rootURL, adminToken)
	if err != nil {
		panic(err)
	}
	org, err := admin.CreateOrg(context.Background(), name)
	if err != nil {
		panic(err)
	}
	return org.APIKey
}

// newTestClient is a client of a fresh account for the tests.
func newTestClient(t *testing.T, name string) *client.Client {
	t.Helper()
	c, err := client.New(baseURL, exampleKey(name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
