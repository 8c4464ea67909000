package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/chat"
	"github.com/hebbdb/hebb/router/embedder"
	"github.com/hebbdb/hebb/router/embedder/use"
	"github.com/hebbdb/hebb/router/ratelimit"
	"github.com/hebbdb/hebb/router/vault"
)

const version = router.Version

// startWait bounds the start's waits for the cluster (a meta leader,
// admission, the cluster record, a new cluster's group leaders), then the
// first org's creation; not the restore of the groups.
const startWait = 60 * time.Second

func serve(args []string) error {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := applyEnv(fs); err != nil {
		return err
	}
	cfg.bootstrapKey = os.Getenv("HEBB_BOOTSTRAP_API_KEY")
	if err := cfg.validate(fs); err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) { // set on the command line or by HEBB_GROUPS
		if f.Name == "groups" {
			cfg.givenGroups = cfg.Groups
		}
	})
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// Catch the signals from the start: a stop during a restart's restore,
	// or before the node answers ready, is a graceful stop too (the start's
	// waits end with stop).
	stop, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stopSignals()
	stopTune := make(chan struct{})
	defer close(stopTune)
	go tuneGC(stopTune)
	emb, err := newEmbedder(&cfg, log)
	if err != nil {
		return fmt.Errorf("cannot start embedder: %w", err)
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://" + cfg.HTTPAddr
	}
	ls, err := listen(&cfg)
	if err != nil {
		return err
	}
	// Restoring the groups can take tens of seconds: answer health checks
	// (not ready) meanwhile instead of leaving the port silent.
	handoff := router.ServeStarting(ls.http, router.Starting{Version: version, Ready: true, Embedding: emb != nil,
		AdminToken: cfg.AdminToken, Log: log})
	handoffChat := func() {}
	if ls.chat != nil {
		handoffChat = router.ServeStarting(ls.chat, router.Starting{Version: chat.Version, Log: log})
	}
	defer handoff() // on a failed start; a handoff acts once
	defer handoffChat()
	stopMetrics, metricsErr := serveMetrics(ls.metrics, log)
	defer stopMetrics()
	existing := cluster.HoldsState(cfg.DataDir)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		ls.close()
		return fmt.Errorf("cannot create data dir: %w", err)
	}
	// The vault key first: a bad HEBB_VAULT_KEY is refused before the
	// cluster is created in the data dir.
	ring, err := loadVault(log, cfg.DataDir, existing, !existing && len(cfg.joinAddrs()) > 0)
	if err != nil {
		ls.close()
		return fmt.Errorf("cannot load the vault master key: %w", err)
	}
	warnOpenTransport(log, &cfg)
	// A stop ends the start at any point; the waits for the cluster give
	// up after startWait, the restore of the groups does not.
	cl, err := cluster.Start(stop, cluster.Config{
		NodeID: cfg.NodeID, DataDir: cfg.DataDir, RaftAddr: cfg.RaftAddr, GossipAddr: cfg.GossipAddr,
		HTTPAddr: cfg.HTTPAddr, Join: cfg.joinAddrs(), Groups: cfg.givenGroups, Replicas: cfg.Replicas,
		Embedder: embedder.Identity(emb), Dim: emb.Dim(), Logger: log, DeadGrace: cfg.DeadNodeGrace,
		VectorsOnDiskAbove: cfg.VectorsOnDiskAbove, WaitTimeout: startWait, ClusterKey: []byte(cfg.ClusterKey),
	})
	if err != nil {
		ls.close()
		return stoppedOr(stop, log, err)
	}
	ctx, cancel := context.WithTimeout(stop, startWait)
	defer cancel()
	if err := checkBoot(ctx, &cfg, cl); err != nil {
		ls.close()
		_ = cl.Close()
		return stoppedOr(stop, log, err)
	}
	if gcTuned() {
		debug.FreeOSMemory() // what restoring the groups' snapshots left behind
		go freeAfterReplay(stop, cl.Replaying, replayPoll, debug.FreeOSMemory)
	}
	proxies, _ := ratelimit.ParseProxies(splitComma(cfg.TrustedProxies)) // checked by validate
	ratelimit.TrustProxies(proxies)
	srv := router.New(router.Config{
		Vault:     ring,
		PublicURL: cfg.PublicURL, AdminToken: cfg.AdminToken, EnableReset: cfg.EnableReset,
		SeparateMetrics:     cfg.MetricsAddr != "",
		EnableConsolidation: cfg.EnableConsolidation, Logger: log, RedirectHosts: cfg.redirectHosts(),
		DefaultPlan: cluster.Plan{DailyQueryQuota: cfg.DailyQueryQuota, AtomLimit: cfg.AtomLimit},
		SMTPURL:     cfg.SMTPURL, MailFrom: cfg.MailFrom,
	}, cl, emb)
	cl.SetHTTPHandler(srv.ServeRaw)
	handoffChat()
	chatSrv, stopChat := serveChat(&cfg, ls.chat, cl, ring, log)
	if chatSrv != nil {
		cl.SetHTTPHandler(transportHandler(srv.ServeRaw, chatSrv))
	}
	handoff()
	if stop.Err() != nil { // stopped while starting
		log.Info("stopping", "signal", context.Cause(stop).Error(), "while", "starting")
		return shutdown(srv, cl, log, stopChat, nil)
	}
	return run(srv, cl, ls, log, &cfg, stop, stopChat, metricsErr)
}

// stoppedOr is err, or nothing when a stop signal ended the start (exit 0:
// the stop the operator asked for).
func stoppedOr(stop context.Context, log *slog.Logger, err error) error {
	if stop.Err() == nil {
		return err
	}
	log.Info("stopped", "signal", context.Cause(stop).Error(), "before", "ready", "start_error", err)
	return nil
}

// serveMetrics serves /metrics on ln (nil: off) from the start, so a
// scrape during a restart's restore is answered; the channel carries the
// server's Serve error.
func serveMetrics(ln net.Listener, log *slog.Logger) (stop func(), errc <-chan error) {
	ch := make(chan error, 1)
	if ln == nil {
		return func() {}, ch
	}
	msrv := newMetricsServer(log)
	go func() { ch <- msrv.Serve(ln) }()
	return func() {
		// A client that holds a request half sent must not hold the stop.
		ctx, cancel := context.WithTimeout(context.Background(), metricsStopWait)
		defer cancel()
		_ = msrv.ShutdownWithContext(ctx)
	}, ch
}

// newMetricsServer is the --metrics-addr listener's server: bounded like
// the REST one (a slow or endless request held its connection and memory
// for ever, and a stop waited for it), GET bodies only, and its errors
// quoting no request bytes (a scraper's Authorization header was logged).
func newMetricsServer(log *slog.Logger) *fasthttp.Server {
	return &fasthttp.Server{
		Handler:               metricsOnly(router.MetricsHandler()),
		MaxRequestBodySize:    4 << 10,
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           60 * time.Second,
		NoDefaultServerHeader: true,
		SecureErrorLogMessage: true,
		Logger:                ratelimit.ConnErrors(log.Handler()),
	}
}

// metricsStopWait bounds how long a stop waits for the metrics listener's
// open requests.
const metricsStopWait = 5 * time.Second

// metricsOnly answers GET /metrics with h and anything else 404.
func metricsOnly(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) != "/metrics" || !ctx.IsGet() && !ctx.IsHead() {
			ctx.Error("404 page not found: this listener serves GET /metrics", fasthttp.StatusNotFound)
			return
		}
		h(ctx)
	}
}

// newEmbedder builds the --embedder. The http embedder probes its server
// once to learn the dimension the data dir records, so it must be up.
func newEmbedder(cfg *serveConfig, log *slog.Logger) (embedder.Embedder, error) {
	switch cfg.Embedder {
	case embedder.NameBuiltin:
		// USE-lite's per-piece table combined with the hash features,
		// shipped inside the binary (router/embedder/use).
		return use.New()
	case embedder.NameHTTP:
	default:
		return embedder.New(cfg.Embedder)
	}
	if cfg.EmbedderURL == "" || cfg.EmbedderModel == "" {
		return nil, errors.New("--embedder http needs --embedder-url and --embedder-model")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := embedder.NewHTTP(ctx, embedder.HTTPConfig{URL: cfg.EmbedderURL, Model: cfg.EmbedderModel,
		APIKey: os.Getenv("HEBB_EMBEDDER_API_KEY"), Logger: log})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// serveChat starts the persistence API (router/chat) on the --chat-addr
// listener, off (nil) without one; the function it returns stops it.
func serveChat(cfg *serveConfig, ln net.Listener, cl *cluster.Cluster, ring *vault.Ring, log *slog.Logger) (*chat.Server, func(context.Context)) {
	if ln == nil {
		return nil, func(context.Context) {}
	}
	ccfg := cfg.chatConfig(ln.Addr().String(), log)
	ccfg.Keys = ring // the chat secret enters the meta log sealed
	srv := chat.New(ccfg, cl)
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Error("chat persistence API stopped", "err", err)
		}
	}()
	log.Info("chat persistence API serving", "addr", "http://"+ln.Addr().String())
	return srv, func(ctx context.Context) {
		if err := srv.Shutdown(ctx); err != nil {
			log.Warn("chat shutdown", "err", err)
		}
	}
}

// transportHandler answers the requests other nodes forward over the node
// transport: the chat surface's (chat.Forwarded) or the REST API's.
func transportHandler(rest func([]byte) []byte, ch *chat.Server) func([]byte) []byte {
	return func(raw []byte) []byte {
		if chat.Forwarded(raw) {
			return ch.ServeRaw(raw)
		}
		return rest(raw)
	}
}

// checkBoot refuses an unsafe reset flag and bootstraps the first org.
func checkBoot(ctx context.Context, cfg *serveConfig, cl *cluster.Cluster) error {
	if cl.Meta().OrgCount() == 0 {
		key := cfg.bootstrapKey // its format checked by validate
		_, raw, _, err := router.CreateOrg(ctx, cl, "default", key)
		if err != nil {
			return fmt.Errorf("cannot create the default org: %w", err)
		}
		if key == "" {
			fmt.Printf("hebb: first start: API key of the default org (shown once, keep it):\n\n    %s\n\n", raw)
		}
	}
	if cfg.EnableReset && cl.Meta().OrgCount() > 1 {
		return errors.New("--enable-reset is refused: this deployment has more than one org (reset would wipe every tenant); start without --enable-reset")
	}
	return nil
}

func run(srv *router.Server, cl *cluster.Cluster, ls *listeners, log *slog.Logger, cfg *serveConfig,
	stop context.Context, stopChat func(context.Context), metricsErr <-chan error) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ls.http) }()
	log.Info("hebb serving", "rest", "http://"+ls.http.Addr().String()+"/api/v1", "node", cl.NodeID(),
		"raft", cfg.RaftAddr, "groups", cl.Info().Groups, "embedder", cl.Info().Embedder, "data_dir", cfg.DataDir)
	var serveErr error
	select {
	case <-stop.Done():
		log.Info("stopping", "signal", context.Cause(stop).Error())
	case serveErr = <-errc:
	case serveErr = <-metricsErr:
	}
	return shutdown(srv, cl, log, stopChat, serveErr)
}

// shutdown stops the listeners (in-flight requests finish), then Raft.
func shutdown(srv *router.Server, cl *cluster.Cluster, log *slog.Logger, stopChat func(context.Context), serveErr error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	stopChat(ctx)
	if err := cl.Close(); err != nil {
		return fmt.Errorf("cannot close raft cleanly: %w", err)
	}
	log.Info("stopped")
	return serveErr
}

// warnOpenTransport warns when the node listener or gossip listens beyond
// this machine without a cluster key: whoever reaches them can act as any
// account (a forwarded request names its account) and join the cluster.
func warnOpenTransport(log *slog.Logger, cfg *serveConfig) {
	if cfg.ClusterKey != "" {
		return
	}
	for _, a := range [][2]string{{"raft-addr", cfg.RaftAddr}, {"gossip-addr", cfg.GossipAddr}} {
		host, _, err := net.SplitHostPort(a[1])
		if ip := net.ParseIP(host); err == nil && (ip == nil || !ip.IsLoopback()) && host != "localhost" {
			log.Warn("node traffic is not authenticated: whoever reaches this address can read and change every account's data; set HEBB_CLUSTER_KEY (the same secret on every node), or keep the address on a private network",
				"flag", "--"+a[0], "addr", a[1])
		}
	}
}
