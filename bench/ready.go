package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// readyPoll is how often awaitReady asks; readyLimit is how long a run
// waits for a server given by --url (a restarted node replays its log
// first: about 30 s at a million atoms on the 2-core VM).
const (
	readyPoll  = 100 * time.Millisecond
	readyLimit = 10 * time.Minute
)

// readyBody is the part of GET /health/ready a run reads. The status is
// 200 whether or not the server is ready (interface §4.9): only the body
// tells.
type readyBody struct {
	Ready  bool            `json:"ready"`
	Checks map[string]bool `json:"checks"`
}

// failing names the checks that did not pass, sorted.
func (b readyBody) failing() string {
	var names []string
	for name, ok := range b.Checks {
		if !ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "no check reported failing"
	}
	slices.Sort(names)
	return "failing checks: " + strings.Join(names, ", ")
}

// ready asks /health/ready once; permanent is set for an answer that
// waiting will not change: a 4xx (the URL is no hebb node, or a path
// before /api/v1 is wrong), which a ready server never gives.
func ready(api *API) (body readyBody, permanent bool, err error) {
	status, raw, err := api.do(&Request{Method: "GET", Path: "/health/ready"}, true)
	switch {
	case err != nil:
		return body, false, fmt.Errorf("cannot call GET /health/ready: %w", err)
	case status >= 400 && status < 500 && status != 408 && status != 429:
		return body, true, fmt.Errorf("GET /health/ready: %w %d: %s", ErrStatus, status, truncate(raw, 300))
	case status < 200 || status > 299:
		return body, false, fmt.Errorf("GET /health/ready: %w %d: %s", ErrStatus, status, truncate(raw, 300))
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return body, false, fmt.Errorf("cannot decode GET /health/ready: %w", err)
	}
	return body, false, nil
}

// awaitReady polls /health/ready until its body reports ready, for up to
// limit. notReady, when not nil, is called after each poll that did not
// find the server ready, and ends the wait with its error (a local server
// that exited).
func awaitReady(ctx context.Context, api *API, limit time.Duration, notReady func() error) error {
	deadline := time.Now().Add(limit)
	last := "no answer"
	for {
		body, permanent, err := ready(api)
		switch {
		case err == nil && body.Ready:
			return nil
		case permanent:
			return fmt.Errorf("%w: %v", ErrNotReady, err)
		case err == nil:
			last = body.failing()
		default:
			last = err.Error()
		}
		if notReady != nil {
			if err := notReady(); err != nil {
				return err
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %s (%s)", ErrNotReady, limit, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(readyPoll):
		}
	}
}
