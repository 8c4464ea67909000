package client

import (
	"context"
	"time"
)

// Secret is a vault secret's record; the value is never returned.
type Secret struct {
	AtomID    string    `json:"atom_id"`
	Alias     string    `json:"alias"`
	Context   string    `json:"context"`
	CreatedAt time.Time `json:"created_at"`
}

// SecretRequest stores Value under Alias (1 to 200 letters, digits, _ - . :).
// Storing an alias again replaces its value and keeps its atom ID.
type SecretRequest struct {
	Alias   string `json:"alias"`
	Value   string `json:"value"`
	Context string `json:"context,omitempty"` // the purpose of the secret
}

// PutSecret seals and stores a secret (POST /vault/secrets).
func (c *Client) PutSecret(ctx context.Context, req SecretRequest) (*Secret, error) {
	var out Secret
	if err := c.post(ctx, "/vault/secrets", req, false, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Secrets lists the account's secrets (aliases and contexts, no values).
func (c *Client) Secrets(ctx context.Context) ([]Secret, error) {
	var out struct {
		Secrets []Secret `json:"secrets"`
	}
	if err := c.get(ctx, "/vault/secrets", &out); err != nil {
		return nil, err
	}
	return out.Secrets, nil
}

// Secret fetches one secret's record by alias; ErrNotFound when absent.
func (c *Client) Secret(ctx context.Context, alias string) (*Secret, error) {
	var out Secret
	if err := c.get(ctx, "/vault/secrets/by-alias/"+seg(alias), &out); err != nil {
		return nil, err
	}
	return &out, nil
}
