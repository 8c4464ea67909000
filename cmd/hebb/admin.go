package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"
)

const adminUsage = `usage:
  hebb admin remove-node <node_id> [--url URL] [--admin-token TOKEN]
  hebb admin create-user --email E --password P [--org ORG] [--role owner|member] [--operator] [--url URL] [--admin-token TOKEN]
  hebb admin set-password --email E --password P [--url URL] [--admin-token TOKEN]`

// admin runs operator commands against a running node's /admin/v1 API.
func admin(args []string) error {
	if len(args) == 0 {
		return errors.New(adminUsage)
	}
	if isHelp(args[0]) {
		fmt.Fprintln(os.Stderr, adminUsage)
		return nil
	}
	switch args[0] {
	case "remove-node":
		return removeNode(args[1:])
	case "create-user":
		return createUser(args[1:])
	case "set-password":
		return setPassword(args[1:])
	}
	return errors.New(adminUsage)
}

// createUser makes a web console user through POST /admin/v1/users. --org
// names an existing org by ID (org_...), or a new org to create by name;
// without it the user gets a new org named after the address.
func createUser(args []string) error {
	fs := flag.NewFlagSet("admin create-user", flag.ContinueOnError)
	url, token := adminFlags(fs)
	email := fs.String("email", "", "the user's e-mail address (their sign-in)")
	password := fs.String("password", os.Getenv("HEBB_USER_PASSWORD"), "the user's password, at least 10 characters (or HEBB_USER_PASSWORD)")
	org := fs.String("org", "", "an existing org ID (org_...), or the name of a new org")
	role := fs.String("role", "owner", "owner or member")
	operator := fs.Bool("operator", false, "the user also sees the console's Cluster page")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *email == "" || *password == "" {
		return errors.New("create-user needs --email and --password (or HEBB_USER_PASSWORD)")
	}
	body := map[string]any{"email": *email, "password": *password, "role": *role, "operator": *operator}
	if strings.HasPrefix(*org, "org_") {
		body["org_id"] = *org
	} else if *org != "" {
		body["org_name"] = *org
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	out, err := adminCall(http.MethodPost, adminBase(*url)+"/admin/v1/users", token.get(), raw, 30*time.Second)
	if err != nil {
		return fmt.Errorf("create-user failed: %w", err)
	}
	fmt.Println(out)
	return nil
}

// setPassword gives a console user a new password through PUT
// /admin/v1/users/{user}/password; their sessions end.
func setPassword(args []string) error {
	fs := flag.NewFlagSet("admin set-password", flag.ContinueOnError)
	url, token := adminFlags(fs)
	email := fs.String("email", "", "the user's e-mail address (or user ID)")
	password := fs.String("password", os.Getenv("HEBB_USER_PASSWORD"), "the new password, at least 10 characters (or HEBB_USER_PASSWORD)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *email == "" || *password == "" {
		return errors.New("set-password needs --email and --password (or HEBB_USER_PASSWORD)")
	}
	raw, err := json.Marshal(map[string]string{"password": *password})
	if err != nil {
		return err
	}
	out, err := adminCall(http.MethodPut, adminBase(*url)+"/admin/v1/users/"+neturl.PathEscape(*email)+"/password", token.get(), raw, 30*time.Second)
	if err != nil {
		return fmt.Errorf("set-password failed: %w", err)
	}
	fmt.Println(out)
	return nil
}

// adminCall sends one admin request and returns the body of a 200.
func adminCall(method, url, token string, body []byte, timeout time.Duration) (string, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Admin-Token", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return "", fmt.Errorf("cannot reach %s: %w", url, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%d: %s", resp.StatusCode, envelopeText(out))
	}
	return strings.TrimSpace(string(out)), nil
}

func removeNode(args []string) error {
	fs := flag.NewFlagSet("admin remove-node", flag.ContinueOnError)
	url, token := adminFlags(fs)
	var id string
	rest := args
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
	req, err := http.NewRequest(http.MethodDelete, adminBase(*url)+"/admin/v1/cluster/nodes/"+id, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Admin-Token", token.get())
	client := &http.Client{Timeout: 6 * time.Minute}
	fmt.Fprintf(os.Stderr, "draining %s (its replicas move to other nodes)...\n", id)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", *url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("remove-node failed (%d): %s", resp.StatusCode, envelopeText(body))
	}
	fmt.Println(strings.TrimSpace(string(body)))
	return nil
}

// adminFlags adds --url and --admin-token to an admin command. The token's
// default, HEBB_ADMIN_TOKEN, is read when it is used (adminToken), so -h
// does not print it.
func adminFlags(fs *flag.FlagSet) (url *string, token *adminToken) {
	url = fs.String("url", adminDefaultURL(), "base URL of any node (the REST base's /api/v1 is dropped)")
	token = new(adminToken)
	fs.Var(token, "admin-token", "the nodes' --admin-token (default $HEBB_ADMIN_TOKEN)")
	return url, token
}

// adminToken is the --admin-token flag: HEBB_ADMIN_TOKEN unless given.
type adminToken struct{ v string }

func (t *adminToken) Set(v string) error { t.v = v; return nil }
func (t *adminToken) String() string     { return "" } // never printed
func (t *adminToken) get() string        { return cmp.Or(t.v, os.Getenv("HEBB_ADMIN_TOKEN")) }

// adminDefaultURL is HEBB_URL_ADMIN, else HEBB_URL (the client commands'
// REST base), else the local node.
func adminDefaultURL() string {
	return envOr("HEBB_URL_ADMIN", envOr("HEBB_URL", "http://127.0.0.1:8080"))
}

// adminBase is the node's base URL the admin API hangs off: a REST base
// given instead (…/api/v1) is cut back to it.
func adminBase(u string) string {
	return strings.TrimSuffix(strings.TrimRight(u, "/"), "/api/v1")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// envelopeText is what an error envelope says: its message and each field
// error's text; the body as it is when it is no envelope.
func envelopeText(body []byte) string {
	var env struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details struct {
			Errors []struct {
				Msg string `json:"msg"`
			} `json:"errors"`
		} `json:"details"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Message == "" {
		return strings.TrimSpace(string(body))
	}
	parts := []string{env.Code + ": " + env.Message}
	for _, e := range env.Details.Errors {
		parts = append(parts, e.Msg)
	}
	return strings.Join(parts, ": ")
}
