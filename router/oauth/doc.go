// Package oauth is hebb's OAuth 2.1 authorization server for the remote tool
// connector, written on the standard library: discovery (RFC 8414 and OpenID
// Connect), Dynamic Client Registration (RFC 7591) limited by a redirect-host
// allowlist, the authorization code grant with PKCE (S256 only), refresh-token
// rotation with reuse detection, revocation (RFC 7009), an RS256 id_token
// and its JWKS, and the protected-resource metadata of the connector
// (RFC 9728). Its handlers are net/http handlers; the router mounts them on
// its fasthttp listener.
//
// A person signs in through the host's sessions (the web console's, given
// as Config.Session and Config.SignInURL): a signed-out browser is sent to
// the console's sign-in and comes back to the same authorization URL, and
// the tokens resolve to the org the session is for. An account without
// people signs in with its API key instead, on a page that offers it as
// the fallback (signin=key), and its tokens resolve to the key's org.
// Either way all authentication methods reach the same account and the
// same atoms. A consent page names the client and the scopes before a code
// is issued; its form carries a sealed ticket, and a ticket made for a
// session is honoured only while the same person is signed in for the same
// org. The pages render in the host's layout (Config.Render) when given.
//
// Invariants:
//   - State lives in the meta group (cluster/oauth_meta.go), so any node
//     issues, redeems, refreshes and validates: clients, codes, grants and
//     tokens are replicated; codes and tokens only as SHA-256 hashes.
//   - Every check that must be atomic (a code used once, a refresh token
//     rotated once) runs inside the meta command's apply, never as a read
//     followed by a write here.
//   - The signing key is made once per cluster (the first SetKey wins) and
//     also keys the HMAC of the short-lived sign-in ticket, so a ticket made
//     on one node is accepted by another.
//   - A grant made by signing in with an API key records the key's ID and
//     ends when the key is revoked (the revocation's meta command revokes
//     it; a code not yet redeemed is refused), as the key itself does.
//   - The token endpoint refuses a resource other than the connector
//     (RFC 8707 invalid_target), as the authorization endpoint does.
//   - Registration is unauthenticated and every client is a replicated
//     record, so one client address registers at most maxRegistrations
//     clients per registerWindow on each node (429 temporarily_unavailable
//     with Retry-After); clients never used are swept after a day.
//   - Errors of the OAuth endpoints use the OAuth shape
//     ({error, error_description}, RFC 6749 §5.2), which OAuth clients parse;
//     unknown paths answer the service's usual error envelope.
package oauth
