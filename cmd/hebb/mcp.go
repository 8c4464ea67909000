package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/mcptools"
)

const defaultRESTBase = "http://127.0.0.1:8080/api/v1"

// mcpStdio runs the local tool server on stdin/stdout (operator.md §7): the
// same tools as the remote connector, each a REST call with the API key of
// MNEMOVERSE_API_KEY (or HEBB_API_KEY) to HEBB_URL.
func mcpStdio(args []string) error {
	const usage = "usage: hebb mcp (configured by MNEMOVERSE_API_KEY or HEBB_API_KEY, and HEBB_URL)"
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprintln(os.Stderr, usage)
		return nil
	}
	if len(args) > 0 {
		return errors.New(usage)
	}
	key := firstEnv("MNEMOVERSE_API_KEY", "HEBB_API_KEY")
	if key == "" {
		return errors.New("hebb mcp: set MNEMOVERSE_API_KEY (or HEBB_API_KEY) to your API key")
	}
	base := restBase(firstEnv("HEBB_URL"))
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	server := mcp.NewServer(&mcp.Implementation{Name: "hebb", Title: "hebb memory", Version: version},
		&mcp.ServerOptions{Logger: log})
	mcptools.Register(server, &restCaller{base: base, key: key,
		http: &http.Client{Timeout: 30 * time.Second}}, mcptools.Options{})
	in, out := newStdioFilter(os.Stdin, os.Stdout).transport()
	return server.Run(context.Background(), &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: -1})
}

// restBase is HEBB_URL as the REST base: the default when unset, and
// /api/v1 added to a bare host (as the CLI's client does), since the
// server's public URL is the natural thing to paste and every tool then
// answered NOT_FOUND.
func restBase(raw string) string {
	base := strings.TrimRight(raw, "/")
	if base == "" {
		return defaultRESTBase
	}
	if u, err := url.Parse(base); err == nil && u.Host != "" && u.Path == "" {
		return base + "/api/v1"
	}
	return base
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// restCaller runs the tools' REST calls over HTTP with the API key.
type restCaller struct {
	base string
	key  string
	http *http.Client
}

// maxToolResponse bounds a REST answer read into a tool result. A read of
// 500 memories at the interface's limits (10,000 characters and 64 KiB of
// metadata each) answers ~75 MB; the remote connector serves it, and the
// 32 MiB this was cut at reported it as "not a JSON object", retryable.
const maxToolResponse = 256 << 20

func (c *restCaller) Do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, fmt.Errorf("cannot encode the request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("cannot build the request: %w", err)
	}
	req.Header.Set("X-Api-Key", c.key)
	req.Header.Set("X-Hebb-Client-Env", "mcp-stdio")
	req.Header.Set("User-Agent", "hebb-mcp/"+router.Version)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("cannot reach %s: %w", c.base, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxToolResponse+1))
	if err != nil {
		return 0, nil, fmt.Errorf("cannot read the answer: %w", err)
	}
	if len(raw) > maxToolResponse {
		return 0, nil, fmt.Errorf("over %d MiB: %w", maxToolResponse>>20, mcptools.ErrAnswerTooLarge)
	}
	return res.StatusCode, raw, nil
}
