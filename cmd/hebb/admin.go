package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// admin runs operator commands against a running node's /admin/v1 API.
func admin(args []string) error {
	if len(args) == 0 || args[0] != "remove-node" {
		return errors.New("usage: hebb admin remove-node <node_id> [--url URL] [--admin-token TOKEN]")
	}
	fs := flag.NewFlagSet("admin remove-node", flag.ContinueOnError)
	url := fs.String("url", envOr("HEBB_URL_ADMIN", "http://127.0.0.1:8080"), "base URL of any node")
	token := fs.String("admin-token", os.Getenv("HEBB_ADMIN_TOKEN"), "the nodes' --admin-token")
	var id string
	rest := args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		id, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if id == "" && fs.NArg() > 0 {
		id = fs.Arg(0)
	}
	if id == "" {
		return errors.New("remove-node needs a node id (see GET /admin/v1/cluster)")
	}
	req, err := http.NewRequest(http.MethodDelete, strings.TrimRight(*url, "/")+"/admin/v1/cluster/nodes/"+id, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Admin-Token", *token)
	client := &http.Client{Timeout: 6 * time.Minute}
	fmt.Fprintf(os.Stderr, "draining %s (its replicas move to other nodes)...\n", id)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", *url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("remove-node failed (%d): %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	fmt.Println(strings.TrimSpace(string(body)))
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
