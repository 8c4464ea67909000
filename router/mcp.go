package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	frouter "github.com/fasthttp/router"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/console"
	"github.com/hebbdb/hebb/router/mcptools"
	"github.com/hebbdb/hebb/router/oauth"
)

// mcpTimeout is the deadline of one POST /mcp: a tool call is one REST
// call, itself bounded by requestTimeout.
const mcpTimeout = requestTimeout + 5*time.Second

const mcpInstructions = "hebb is a persistent memory shared by your agents. Search it with memory_read before " +
	"answering from scratch; store durable preferences, decisions, lessons and facts with memory_write; " +
	"report how helpful retrieved memories were with memory_feedback. A domain of the form xroom:<room_id> " +
	"addresses a shared room."

// toolSurface is the remote tool connector and its authorization server.
type toolSurface struct {
	oauth   *oauth.Server
	mcp     http.Handler
	schemas *mcp.SchemaCache
}

// mcpIdentity is who a POST /mcp runs as.
type mcpIdentity struct {
	org    string
	scopes []string // nil: an API key, every scope
	client string   // the OAuth client's name
}

type mcpIdentityKey struct{}

// toolRoutes mounts POST /mcp, the authorization server under /oauth and
// the discovery documents under /.well-known. People authorize the
// connector through their console sessions, on pages in the console's
// layout (consoleRoutes runs first).
func (s *Server) toolRoutes(r *frouter.Router) {
	public := strings.TrimRight(s.cfg.PublicURL, "/")
	t := &toolSurface{schemas: mcp.NewSchemaCache()}
	cfg := oauth.Config{Issuer: public, Resource: public + "/mcp", RedirectHosts: s.cfg.RedirectHosts, Logger: s.log,
		Keys: s.cfg.Vault}
	if s.console != nil && s.console.c != nil {
		cfg.Session, cfg.SignInURL, cfg.Render = s.consoleSession, console.SignInPath, s.console.c.Page
	}
	t.oauth = oauth.New(cfg, s.backend)
	t.mcp = mcp.NewStreamableHTTPHandler(s.mcpServer, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true,
		// Callers authenticate with a bearer token, never ambient
		// credentials, so DNS rebinding gains nothing.
		DisableLocalhostProtection: true, MaxRequestBodyBytes: MaxBodySize})
	s.tools = t
	authServer := func(ctx *fasthttp.RequestCtx) {
		std, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		serveStd(ctx, t.oauth.Handler(), std)
	}
	r.ANY("/oauth/{path:*}", authServer)
	r.ANY("/.well-known/{path:*}", authServer)
	r.POST("/mcp", s.plain(s.mcpPost))
	r.GET("/mcp", s.plain(func(c *call) error { return notFound("Not found") }))
	r.OPTIONS("/mcp", mcpPreflight)
}

func mcpCORS(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version")
}

func mcpPreflight(ctx *fasthttp.RequestCtx) {
	mcpCORS(ctx)
	ctx.Response.Header.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	ctx.Response.Header.Set("Access-Control-Allow-Headers",
		"Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, X-Api-Key")
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// mcpPost answers one JSON-RPC POST of the streamable HTTP transport as the
// token's (or API key's) org.
func (s *Server) mcpPost(c *call) error {
	mcpCORS(c.ctx)
	id, err := s.mcpIdentity(c)
	if err != nil {
		return err
	}
	if refusal := mcptools.Refusal(c.ctx.PostBody(), true); refusal != nil {
		// Answered in JSON-RPC here: the SDK's handler answers in plain
		// text, with the client's input in it.
		c.ctx.SetStatusCode(fasthttp.StatusBadRequest)
		c.ctx.SetContentType("application/json")
		c.ctx.SetBody(refusal)
		return nil
	}
	if err := s.checkToolScopes(c.ctx.PostBody(), id.scopes); err != nil {
		return err
	}
	std, cancel := context.WithTimeout(context.WithValue(context.Background(), mcpIdentityKey{}, id), mcpTimeout)
	defer cancel()
	serveStd(c.ctx, s.tools.mcp, std)
	r := &c.ctx.Response
	switch ct := r.Header.ContentType(); {
	case r.StatusCode() >= 400 && r.StatusCode() < 500 && bytes.HasPrefix(ct, []byte("text/plain")):
		r.SetBody(mcptools.FromSDKText(r.StatusCode(), string(r.Body()), c.ctx.PostBody()))
		r.Header.SetContentType("application/json")
	case bytes.HasPrefix(ct, []byte("application/json")):
		// Errors the SDK words itself (code 0, its Go types, the input
		// echoed) are answered as hebb mcp answers them on stdio.
		if clean := cleanSDKErrors(r.Body()); clean != nil {
			r.SetBody(clean)
		}
	}
	return nil
}

// cleanSDKErrors rewrites the SDK-worded errors of a JSON-RPC answer (one
// message or a batch); nil when there is none.
func cleanSDKErrors(body []byte) []byte {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '[' {
		return mcptools.CleanSDKError(body)
	}
	var msgs []json.RawMessage
	if json.Unmarshal(body, &msgs) != nil {
		return nil
	}
	changed := false
	for i, m := range msgs {
		if clean := mcptools.CleanSDKError(m); clean != nil {
			msgs[i], changed = bytes.TrimSpace(clean), true
		}
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(msgs)
	if err != nil {
		return nil
	}
	return out
}

// mcpIdentity authenticates a POST /mcp: an OAuth access token, or an API
// key (X-Api-Key or a Bearer mk_live_ key) with every scope.
func (s *Server) mcpIdentity(c *call) (*mcpIdentity, error) {
	key, _ := apiKey(c)
	if key == "" {
		return nil, s.mcpChallenge(cluster.ReasonMissingKey, "Sign in to use the connector: send an OAuth access token", "")
	}
	if strings.HasPrefix(key, cluster.KeyPrefix) {
		var ae *apiError
		if err := s.authenticate(c); errors.As(err, &ae) && ae.Status == 401 {
			reason, _ := ae.Details["reason"].(string)
			return nil, s.mcpChallenge(reason, ae.Message, `, error="invalid_token"`)
		} else if err != nil {
			return nil, err
		}
		return &mcpIdentity{org: c.org}, nil
	}
	g, err := s.tools.oauth.Verify(c.std, key)
	if errors.Is(err, oauth.ErrInvalidToken) {
		return nil, s.mcpChallenge("invalid_token", "The access token is not valid or has expired", `, error="invalid_token"`)
	}
	if err != nil {
		return nil, err
	}
	c.org = g.OrgID
	return &mcpIdentity{org: g.OrgID, scopes: g.Scopes, client: g.ClientName}, nil
}

// mcpChallenge is the connector's 401: the error envelope with a Bearer
// challenge naming the protected-resource metadata (RFC 9728).
func (s *Server) mcpChallenge(reason, msg, extra string) *apiError {
	e := newError(401, codeUnauthorized, msg).with("reason", reason)
	e.Header = map[string]string{"WWW-Authenticate": fmt.Sprintf(`Bearer resource_metadata=%q%s`,
		s.tools.oauth.ResourceMetadataURL(), extra)}
	return e
}

// checkToolScopes refuses, with 403 insufficient_scope (RFC 6750), a
// tools/call of a tool whose scope the token lacks, so the client can step
// up its authorization.
func (s *Server) checkToolScopes(body []byte, scopes []string) error {
	if scopes == nil {
		return nil
	}
	// Maps, not structs: encoding/json matches a struct's fields without
	// regard to case, so {"name": "memory_write", "Name": "memory_read"}
	// read as memory_read here and as memory_write in the SDK.
	var msgs []map[string]json.RawMessage
	var one map[string]json.RawMessage
	if json.Unmarshal(body, &one) != nil && json.Unmarshal(body, &msgs) != nil {
		return nil // the transport answers malformed bodies
	}
	msgs = append(msgs, one)
	for _, m := range msgs {
		var method, name string
		var params map[string]json.RawMessage
		_ = json.Unmarshal(m["method"], &method)
		_ = json.Unmarshal(m["params"], &params)
		_ = json.Unmarshal(params["name"], &name)
		need, ok := mcptools.RequiredScope(name)
		if method != "tools/call" || !ok || slices.Contains(scopes, need) {
			continue
		}
		e := forbidden("The access token lacks the "+need+" scope").with("reason", "insufficient_scope").with("scope", need)
		e.Header = map[string]string{"WWW-Authenticate": fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`,
			need, s.tools.oauth.ResourceMetadataURL())}
		return e
	}
	return nil
}

// mcpServer builds the tool server of one request (the connector is
// stateless), bound to the request's identity.
func (s *Server) mcpServer(r *http.Request) *mcp.Server {
	id, _ := r.Context().Value(mcpIdentityKey{}).(*mcpIdentity)
	server := mcp.NewServer(&mcp.Implementation{Name: "hebb", Title: "hebb memory", Version: Version},
		&mcp.ServerOptions{Instructions: mcpInstructions, SchemaCache: s.tools.schemas})
	if id == nil {
		return server // unreachable: mcpPost always sets it
	}
	opts := mcptools.Options{Remote: true}
	if id.scopes != nil {
		scopes := id.scopes
		opts.Scopes = func(context.Context) []string { return scopes }
	}
	headers := map[string]string{"X-Hebb-Client-Env": "mcp-remote"}
	if id.client != "" {
		headers["X-Hebb-Agent"] = id.client
	}
	mcptools.Register(server, toolCaller{s: s, org: id.org, headers: headers}, opts)
	return server
}
