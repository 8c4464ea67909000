package client

import "context"

// Health is the liveness answer (GET /health).
type Health struct {
	Status   string `json:"status"`   // always "ok"
	Database bool   `json:"database"` // always false: no database check is made
	Version  string `json:"version"`
}

// Readiness is the readiness answer (GET /health/ready): always HTTP 200
// while the process is up; Ready is true only when every check passes.
type Readiness struct {
	Ready  bool `json:"ready"`
	Checks struct {
		Database  bool `json:"database"`
		Engine    bool `json:"engine"`
		Embedding bool `json:"embedding"`
	} `json:"checks"`
	Version string `json:"version"`
}

// Health probes liveness (public: the key is sent but not needed).
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var out Health
	if err := c.get(ctx, "/health", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Ready probes readiness.
func (c *Client) Ready(ctx context.Context) (*Readiness, error) {
	var out Readiness
	if err := c.get(ctx, "/health/ready", &out); err != nil {
		return nil, err
	}
	return &out, nil
}
