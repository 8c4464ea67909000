package cluster

import "errors"

// Sentinel errors. Compare with errors.Is; the values returned by Apply and by
// the key helpers wrap them with context.
var (
	// ErrInvalidCommand is returned by Apply for a well-formed command whose
	// content is not acceptable (an empty ID, a negative limit, a key record
	// whose fields disagree).
	ErrInvalidCommand = errors.New("cluster: invalid command")
	// ErrOrgExists is returned when creating an org whose ID is taken.
	ErrOrgExists = errors.New("cluster: org already exists")
	// ErrUnknownOrg is returned for a command naming an org that does not exist.
	ErrUnknownOrg = errors.New("cluster: unknown org")
	// ErrKeyExists is returned when creating a key whose ID is taken.
	ErrKeyExists = errors.New("cluster: key already exists")
	// ErrUnknownKey is returned when revoking a key that does not exist.
	ErrUnknownKey = errors.New("cluster: unknown key")
	// ErrSnapshotVersion is returned by Restore for a snapshot format it does
	// not know.
	ErrSnapshotVersion = errors.New("cluster: unsupported snapshot version")
	// ErrCorruptSnapshot is returned by Restore for a snapshot whose content is
	// inconsistent (duplicate IDs, keys of unknown orgs).
	ErrCorruptSnapshot = errors.New("cluster: corrupt snapshot")

	// ErrMissingKey and the four below are what an *AuthError matches with
	// errors.Is, one per Reason.
	ErrMissingKey     = errors.New("cluster: missing api key")
	ErrPlaceholderKey = errors.New("cluster: placeholder api key")
	ErrMalformedKey   = errors.New("cluster: malformed api key")
	ErrInvalidKey     = errors.New("cluster: invalid api key")
	ErrRevokedKey     = errors.New("cluster: revoked api key")
)

// Reasons an API key is rejected; they are the interface's details.reason
// values of a 401 UNAUTHORIZED.
const (
	ReasonMissingKey     = "missing_key"
	ReasonPlaceholderKey = "placeholder_key"
	ReasonMalformedKey   = "malformed_key"
	ReasonInvalidKey     = "invalid_key"
	ReasonRevokedKey     = "revoked_key"
)

// AuthError is the rejection of an API key. Reason is one of the Reason*
// constants. It never carries the key itself.
type AuthError struct {
	Reason string
}

// Error implements error.
func (e *AuthError) Error() string {
	if s, ok := reasonSentinel[e.Reason]; ok {
		return s.Error()
	}
	return "cluster: api key rejected: " + e.Reason
}

// Is reports whether target is the sentinel error of e's Reason, so
// errors.Is(err, ErrRevokedKey) holds for a revoked key.
func (e *AuthError) Is(target error) bool {
	return target != nil && target == reasonSentinel[e.Reason]
}

var reasonSentinel = map[string]error{
	ReasonMissingKey:     ErrMissingKey,
	ReasonPlaceholderKey: ErrPlaceholderKey,
	ReasonMalformedKey:   ErrMalformedKey,
	ReasonInvalidKey:     ErrInvalidKey,
	ReasonRevokedKey:     ErrRevokedKey,
}

func authError(reason string) error {
	return &AuthError{Reason: reason}
}

// Errors of the cluster wiring.
var (
	// ErrUnavailable means no leader of the needed group answered in time.
	ErrUnavailable = errors.New("cluster: group unavailable")
	// ErrOutcomeUnknown means a proposal reached a leader but its result
	// did not come back (leadership lost after the leader took it, its
	// deadline passed, the answer lost on the way): the command may or may
	// not be applied. Errors carrying it also carry ErrUnavailable.
	ErrOutcomeUnknown = errors.New("cluster: the command's outcome is unknown")
	// ErrStorage means the group's leader could not write a command to its
	// log (a full or failing disk): the command was not applied.
	ErrStorage = errors.New("cluster: the leader cannot write its log")
	// ErrEmbedderMismatch refuses a start whose embedder differs from the
	// one the data dir was created with.
	ErrEmbedderMismatch = errors.New("cluster: embedder mismatch")
	// ErrUnsupported is a feature this build does not offer yet.
	ErrUnsupported = errors.New("cluster: unsupported")
)

// ErrNotHosted means this node holds no replica of the group: the request
// is forwarded whole to a node that does.
var ErrNotHosted = errors.New("cluster: group not hosted on this node")

// ErrUnknownNode is an operator call naming a node the cluster never saw.
var ErrUnknownNode = errors.New("cluster: unknown node")

// ErrRemoved is a restart of a node an operator drained and removed.
var ErrRemoved = errors.New("cluster: node removed from the cluster")

// ErrDuplicateNode is a start under a node ID a live node already uses.
var ErrDuplicateNode = errors.New("cluster: node id in use")

// Errors of the OAuth commands (oauth_meta.go).
var (
	// ErrOAuthClientExists is returned when registering a taken client ID.
	ErrOAuthClientExists = errors.New("cluster: oauth client already exists")
	// ErrUnknownOAuthClient is returned for a code issued to no known client.
	ErrUnknownOAuthClient = errors.New("cluster: unknown oauth client")
	// ErrOAuthInvalidGrant is a code or refresh token that cannot be
	// redeemed: unknown, expired, used, revoked, or not matching the request.
	ErrOAuthInvalidGrant = errors.New("cluster: invalid oauth grant")
	// ErrOAuthInvalidScope is a refresh asking for a scope its grant lacks.
	ErrOAuthInvalidScope = errors.New("cluster: oauth scope not granted")
)
