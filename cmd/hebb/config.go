package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/chat"
	"github.com/hebbdb/hebb/router/ratelimit"
	"github.com/hebbdb/hebb/shard"
)

// serveConfig is every flag of `hebb serve` (operator.md §2).
type serveConfig struct {
	DataDir             string
	HTTPAddr            string
	NodeID              string
	RaftAddr            string
	GossipAddr          string
	Join                string
	Groups              int
	Replicas            int
	AdminToken          string
	EnableReset         bool
	EnableConsolidation bool
	Embedder            string
	EmbedderURL         string
	EmbedderModel       string
	DailyQueryQuota     int64
	AtomLimit           int64
	MetricsAddr         string
	ChatAddr            string
	ChatServiceToken    string
	ChatPublicURL       string
	ChatTrustedOrigins  string
	ChatOIDCIssuer      string
	ChatOIDCClientID    string
	ChatOIDCSecret      string
	SMTPURL             string
	MailFrom            string
	PublicURL           string
	DeadNodeGrace       time.Duration
	OAuthRedirectHosts  string
	TrustedProxies      string
	VectorsOnDiskAbove  int
	ClusterKey          string

	givenGroups  int    // Groups when --groups (or HEBB_GROUPS) was given, else 0: a restart then keeps the recorded number without a warning
	bootstrapKey string // HEBB_BOOTSTRAP_API_KEY: the default org's key on a new cluster's first start
}

func (c *serveConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", "./data", "Raft logs, snapshots, vault key file")
	fs.StringVar(&c.HTTPAddr, "http-addr", "127.0.0.1:8080", "REST listener; the REST base is http://<addr>/api/v1")
	fs.StringVar(&c.NodeID, "node-id", "", "stable node identity, 1-64 letters, digits, '.', '_' or '-' (default: derived from the data dir and persisted)")
	fs.StringVar(&c.RaftAddr, "raft-addr", "127.0.0.1:7000", "one listener for every Raft group and node-to-node RPC")
	fs.StringVar(&c.GossipAddr, "gossip-addr", "127.0.0.1:7946", "memberlist bind address")
	fs.StringVar(&c.Join, "join", "", "comma-separated gossip addresses of existing nodes")
	fs.IntVar(&c.Groups, "groups", cluster.DefaultGroups,
		fmt.Sprintf("number of data Raft groups, fixed at cluster creation (at most %d: every node runs every group)", cluster.MaxGroups))
	fs.IntVar(&c.Replicas, "replicas", 3, "voters per group, capped by the number of live nodes")
	fs.StringVar(&c.AdminToken, "admin-token", "", "enables /admin/v1 with header X-Admin-Token")
	fs.BoolVar(&c.EnableReset, "enable-reset", false, "allow DELETE /memory/reset (refused with more than one org)")
	fs.BoolVar(&c.EnableConsolidation, "enable-consolidation", false, "run POST /memory/consolidate instead of answering 503")
	fs.StringVar(&c.Embedder, "embedder", "builtin", "builtin, hash or http")
	fs.StringVar(&c.EmbedderURL, "embedder-url", "", "base URL of an OpenAI-compatible /v1/embeddings (embedder http)")
	fs.StringVar(&c.EmbedderModel, "embedder-model", "", "model name for the http embedder")
	fs.Int64Var(&c.DailyQueryQuota, "daily-query-quota", 1000, "per-account queries per day; 0 = unlimited")
	fs.Int64Var(&c.AtomLimit, "atom-limit", 0, "per-account total_atoms limit; 0 = unlimited")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "separate listener for /metrics (default: on --http-addr)")
	fs.StringVar(&c.ChatAddr, "chat-addr", "127.0.0.1:8090", "the persistence API (chat-room surface)")
	fs.StringVar(&c.ChatServiceToken, "chat-service-token", "", "service token of the persistence API's /internal routes")
	fs.StringVar(&c.ChatPublicURL, "chat-public-url", "", "how browsers reach the persistence API (default http://<chat-addr>)")
	fs.StringVar(&c.ChatTrustedOrigins, "chat-trusted-origins", "", "comma-separated origins a chat sign-in may return the browser to, and whose pages may use the session cookie")
	fs.StringVar(&c.ChatOIDCIssuer, "chat-oidc-issuer", "", "OpenID Connect issuer URL chat users sign in with (empty: guests only)")
	fs.StringVar(&c.ChatOIDCClientID, "chat-oidc-client-id", "", "client ID registered with the chat OpenID Connect provider")
	fs.StringVar(&c.ChatOIDCSecret, "chat-oidc-client-secret", "", "client secret for the chat OpenID Connect provider (empty: public client with PKCE)")
	fs.StringVar(&c.SMTPURL, "smtp-url", "", "mail for console invitations (smtp://user:pass@host:port)")
	fs.StringVar(&c.MailFrom, "mail-from", "", "sender address of console invitations")
	fs.StringVar(&c.PublicURL, "public-url", "", "how clients reach this node (default http://<http-addr>)")
	fs.DurationVar(&c.DeadNodeGrace, "dead-node-grace", 30*time.Second, "how long a node may be dead before its replicas are replaced")
	fs.IntVar(&c.VectorsOnDiskAbove, "vectors-on-disk-above", cluster.DefaultVectorsOnDiskAbove,
		"rows of a data group from which the vectors of its domains of 1,024 rows or more live in a file under --data-dir instead of memory; 0 = all in memory")
	fs.StringVar(&c.OAuthRedirectHosts, "oauth-redirect-hosts", "", "comma-separated hosts (or *.domain) OAuth clients may redirect to; loopback is always allowed")
	fs.StringVar(&c.ClusterKey, "cluster-key", "", "secret shared by every node (at least 32 characters; better given as HEBB_CLUSTER_KEY): node traffic is mutual TLS and gossip encrypted; empty leaves both open to whoever reaches them")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "comma-separated IPs or CIDRs of reverse proxies whose X-Forwarded-For gives the client's address to per-address limits")
}

// applyEnv fills every flag not given on the command line from
// HEBB_<FLAG_IN_UPPER_SNAKE>; flags win.
func applyEnv(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := "HEBB_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("invalid %s=%q: %w", env, v, e)
			}
		}
	})
	return err
}

// validate refuses, before anything is written to the data dir, values
// the flags' types let through but the server cannot use (the admin API
// refuses the same plan values), and a HEBB_BOOTSTRAP_API_KEY that is no
// key, whether or not this start will use it.
func (c *serveConfig) validate(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: hebb serve takes flags only (see hebb serve -h)", fs.Arg(0))
	}
	var errs []error
	atLeast := func(name string, v, min int64) {
		if v < min {
			errs = append(errs, fmt.Errorf("--%s must be at least %d, not %d", name, min, v))
		}
	}
	atLeast("groups", int64(c.Groups), 1)
	if c.Groups > cluster.MaxGroups {
		errs = append(errs, fmt.Errorf("--groups must be at most %d, not %d: every node runs every group's Raft instance (README, --groups)",
			cluster.MaxGroups, c.Groups))
	}
	atLeast("replicas", int64(c.Replicas), 1)
	atLeast("daily-query-quota", c.DailyQueryQuota, 0)
	atLeast("atom-limit", c.AtomLimit, 0)
	atLeast("vectors-on-disk-above", int64(c.VectorsOnDiskAbove), 0)
	if c.DeadNodeGrace <= 0 {
		errs = append(errs, fmt.Errorf("--dead-node-grace must be positive, not %s", c.DeadNodeGrace))
	}
	for _, f := range [][2]string{{"public-url", c.PublicURL}, {"chat-public-url", c.ChatPublicURL}} {
		if u, err := url.Parse(f[1]); f[1] != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			errs = append(errs, fmt.Errorf("--%s must be an http:// or https:// URL with a host, not %q", f[0], f[1]))
		}
	}
	if c.NodeID != "" && !validNodeID(c.NodeID) {
		errs = append(errs, fmt.Errorf("--node-id must be 1 to %d letters, digits, '.', '_' or '-', not %q", maxNodeID, c.NodeID))
	}
	if n := len(c.ClusterKey); n > 0 && n < shard.MinClusterKeyLen {
		errs = append(errs, fmt.Errorf("--cluster-key must be at least %d characters, not %d (the same secret on every node; e.g. openssl rand -base64 32)", shard.MinClusterKeyLen, n))
	}
	if _, err := ratelimit.ParseProxies(splitComma(c.TrustedProxies)); err != nil {
		errs = append(errs, fmt.Errorf("--trusted-proxies: %w", err))
	}
	if c.bootstrapKey != "" {
		if err := cluster.ExplainKeyFormat(c.bootstrapKey); err != nil {
			errs = append(errs, fmt.Errorf("HEBB_BOOTSTRAP_API_KEY is refused: %w", err))
		}
	}
	return errors.Join(errs...)
}

// maxNodeID is the longest --node-id: it names the node in every Raft
// group's configuration, in gossip, in logs and in the admin API.
const maxNodeID = 64

func validNodeID(id string) bool {
	if len(id) > maxNodeID {
		return false
	}
	for _, r := range id {
		if !(r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func (c *serveConfig) joinAddrs() []string { return splitComma(c.Join) }

func (c *serveConfig) redirectHosts() []string { return splitComma(c.OAuthRedirectHosts) }

func splitComma(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// chatConfig is the persistence API's configuration; addr is the address
// its listener got.
func (c *serveConfig) chatConfig(addr string, log *slog.Logger) chat.Config {
	public := c.ChatPublicURL
	if public == "" {
		public = "http://" + addr
	}
	var origins []string
	for _, o := range strings.Split(c.ChatTrustedOrigins, ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" {
			origins = append(origins, o)
		}
	}
	return chat.Config{PublicURL: public, TrustedOrigins: origins, ServiceToken: c.ChatServiceToken, Logger: log,
		OIDC: chat.OIDC{Issuer: c.ChatOIDCIssuer, ClientID: c.ChatOIDCClientID, ClientSecret: c.ChatOIDCSecret}}
}
