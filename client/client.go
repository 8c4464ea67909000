package client

import (
	"context"
	"net/http"
	"net/url"
)

// Client calls the REST API of one hebb deployment with one API key. It is
// safe for concurrent use.
type Client struct {
	c *conn
}

// DefaultBaseURL is the REST base of a node started with default flags.
const DefaultBaseURL = "http://127.0.0.1:8080/api/v1"

// New returns a client of the REST base baseURL (e.g.
// http://127.0.0.1:8080/api/v1; a URL with no path gets /api/v1) that sends
// apiKey in X-Api-Key.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	base, err := normalizeBase(baseURL, "/api/v1")
	if err != nil {
		return nil, err
	}
	c, err := newConn(base, "X-Api-Key", apiKey, opts)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// BaseURL is the REST base the client calls.
func (c *Client) BaseURL() string { return c.c.base }

func (c *Client) get(ctx context.Context, path string, out any) error {
	return c.c.do(ctx, &request{method: http.MethodGet, path: path, safe: true}, out)
}

// post sends body; safe marks a request that may be repeated after a
// transport error (a read).
func (c *Client) post(ctx context.Context, path string, body any, safe bool, out any) error {
	return c.c.do(ctx, &request{method: http.MethodPost, path: path, body: body, safe: safe}, out)
}

func (c *Client) send(ctx context.Context, method, path string, body, out any) error {
	return c.c.do(ctx, &request{method: method, path: path, body: body}, out)
}

// seg escapes one path segment.
func seg(s string) string { return url.PathEscape(s) }
