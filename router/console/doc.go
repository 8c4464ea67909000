// Package console is hebb's web console, served at /console: sign-up and
// sign-in for people (users who belong to orgs with a role, owner or
// member), and the pages an account is run from — Overview, Memories, API
// keys, Settings, Rooms (members, e-mail invitations), Vault and, for
// operators, Cluster — plus the browser side of room invitations: the
// accept page of an e-mail invitation and the join links
// /console/join/<code> that share messages carry.
//
// Pages are rendered on the server with html/template; the package's own
// small CSS and JavaScript files are embedded and progressively enhance
// forms that work without them. The handlers are net/http handlers; the
// router mounts them on its fasthttp listener.
//
// Invariants:
//   - Every memory, room and vault operation goes through the REST API's
//     own handlers, run in-process as the signed-in user's org
//     (Backend.REST): the console never reaches data another org could not
//     reach with an API key of its own, and answers exactly as the API does.
//   - Users, memberships, sessions and e-mail invitations live in the meta
//     group (cluster/console_meta.go), so any node serves any session.
//     Session and invitation tokens are stored only as SHA-256 hashes;
//     passwords only as argon2id hashes.
//   - Session cookies are HttpOnly and SameSite=Lax, Secure behind https
//     (where every answer also carries Strict-Transport-Security);
//     a sign-in always mints a new session (a cookie presented before it is
//     never adopted).
//   - Every state-changing request passes two checks: the cross-origin
//     check (Sec-Fetch-Site, else Origin against Host) and a CSRF token —
//     the session's (an HMAC of its token) once signed in, a double-submit
//     cookie on the sign-in and sign-up forms.
//   - Failed sign-ins are rate limited per e-mail address and client
//     address (5), per client address (30) and per e-mail address from all
//     addresses (50), in 15-minute windows on each node: a stranger's
//     failures do not lock a person out from their own address.
//   - Mutations of an org (keys, settings, rooms, vault, deletes) need the
//     owner role; secret values are accepted, never shown.
package console
