package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestE2EClusterOAuth runs the remote connector's sign-in as a client
// behind a load balancer meets it, each step on another node of a
// three-node cluster: registration, the API-key sign-in, the consent, the
// code exchange, an MCP call with the access token and a refresh. Before
// 259c939 every step that records something failed on the nodes that did
// not lead the meta group.
func TestE2EClusterOAuth(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	var bases []string
	for _, cn := range c.nodes {
		bases = append(bases, "http://"+cn.httpAddr)
	}
	clientID, tok := authorizeByHand(t, clusterKey, bases...)
	for i, base := range bases {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), "memory_read") {
			t.Fatalf("tools/list on node %d: %d %s", i+1, res.StatusCode, body)
		}
	}
	again := exchange(t, bases[1], url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken},
		"client_id": {clientID}})
	if again.AccessToken == tok.AccessToken {
		t.Fatalf("refresh on node 2 returned the same access token")
	}
}
