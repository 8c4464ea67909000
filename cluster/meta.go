package cluster

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ClusterInfo is the cluster record, written once by the first InitCluster.
type ClusterInfo struct {
	ClusterID string    `json:"cluster_id"`
	Embedder  string    `json:"embedder"`
	Dim       int       `json:"dim"`
	Groups    int       `json:"groups"`
	CreatedAt time.Time `json:"created_at"`
}

// Org is an account.
type Org struct {
	ID        string    `json:"org_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Plan is the limits of an org; 0 means unlimited.
type Plan struct {
	DailyQueryQuota int64 `json:"daily_query_quota"`
	AtomLimit       int64 `json:"atom_limit"`
}

// Settings is an org's effective settings.
type Settings struct {
	HideReplaced bool `json:"hide_replaced"`
	Plan         Plan `json:"plan"`
}

// SettingsOverride is what an org has set explicitly; a nil field takes the
// node's default. It is the result of an UpdateSettings command.
type SettingsOverride struct {
	HideReplaced    *bool  `json:"hide_replaced,omitempty"`
	DailyQueryQuota *int64 `json:"daily_query_quota,omitempty"`
	AtomLimit       *int64 `json:"atom_limit,omitempty"`
}

// Resolve returns the effective settings: overridden fields, def for the rest
// (HideReplaced defaults to false).
func (o SettingsOverride) Resolve(def Plan) Settings {
	s := Settings{Plan: def}
	if o.HideReplaced != nil {
		s.HideReplaced = *o.HideReplaced
	}
	if o.DailyQueryQuota != nil {
		s.Plan.DailyQueryQuota = *o.DailyQueryQuota
	}
	if o.AtomLimit != nil {
		s.Plan.AtomLimit = *o.AtomLimit
	}
	return s
}

func (o SettingsOverride) clone() SettingsOverride {
	return SettingsOverride{
		HideReplaced:    clonePtr(o.HideReplaced),
		DailyQueryQuota: clonePtr(o.DailyQueryQuota),
		AtomLimit:       clonePtr(o.AtomLimit),
	}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// KeyInfo describes an API key without its hash.
type KeyInfo struct {
	KeyID     string    `json:"key_id"`
	OrgID     string    `json:"org_id"`
	Label     string    `json:"label"`
	Prefix    string    `json:"prefix"`
	CreatedAt time.Time `json:"created_at"`
	Revoked   bool      `json:"revoked"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// keyRecord is a stored key: its public description and the SHA-256 of the
// raw key.
type keyRecord struct {
	info KeyInfo
	hash [32]byte
}

// metaState is everything the meta group holds. Maps are only indexes: every
// output that leaves the package is sorted, never in map order.
type metaState struct {
	applied  uint64
	cluster  *ClusterInfo
	orgs     map[string]Org
	settings map[string]SettingsOverride // org ID -> override; absent = defaults
	keys     map[string]keyRecord        // key ID -> record
	byPrefix map[string][]string         // key prefix -> key IDs, sorted
	orgKeys  map[string][]string         // org ID -> key IDs, sorted
	usage    usageDay                    // queries counted today, per org
	nodes    map[string]string           // node ID -> draining | left
	chat     chatMetaState               // chat users, sessions, signing key (chat_meta.go)
	oauth    oauthState                  // OAuth clients, codes, tokens, signing key
	console  consoleState                // console users, sessions, invitations (console_meta.go)
}

func newMetaState() *metaState {
	return &metaState{
		orgs:     make(map[string]Org),
		settings: make(map[string]SettingsOverride),
		keys:     make(map[string]keyRecord),
		byPrefix: make(map[string][]string),
		orgKeys:  make(map[string][]string),
	}
}

// addKey indexes a validated key record.
func (st *metaState) addKey(rec keyRecord) {
	st.keys[rec.info.KeyID] = rec
	st.byPrefix[rec.info.Prefix] = insertSorted(st.byPrefix[rec.info.Prefix], rec.info.KeyID)
	st.orgKeys[rec.info.OrgID] = insertSorted(st.orgKeys[rec.info.OrgID], rec.info.KeyID)
}

func insertSorted(ids []string, id string) []string {
	i, _ := slices.BinarySearch(ids, id)
	return slices.Insert(ids, i, id)
}

// Meta is the state machine of the meta group. Create it with NewMeta. Apply
// and Restore take the write lock; queries take the read lock and may be
// called from any number of goroutines.
type Meta struct {
	mu   sync.RWMutex
	st   *metaState
	sync atomic.Pointer[func(context.Context) error] // Synced's barrier (meta_sync.go)
}

// NewMeta returns an empty meta state machine.
func NewMeta() *Meta {
	return &Meta{st: newMetaState()}
}

// Apply applies one command (1-byte type + JSON payload, made by an Encode*
// function) at log index index and returns its result: the created or updated
// record, or an error for an expected failure. An undecodable command is a bug
// and panics.
func (m *Meta) Apply(index uint64, cmd []byte) any {
	apply := decodeCommand(cmd)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.applied = index
	return apply(m.st)
}

// AppliedIndex returns the log index of the last applied command (or of the
// restored snapshot).
func (m *Meta) AppliedIndex() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.st.applied
}

// ClusterInfo returns the cluster record; false before InitCluster.
func (m *Meta) ClusterInfo() (ClusterInfo, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.st.cluster == nil {
		return ClusterInfo{}, false
	}
	return *m.st.cluster, true
}

// Org returns an org by ID.
func (m *Meta) Org(id string) (Org, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.st.orgs[id]
	return o, ok
}

// Orgs returns every org sorted by CreatedAt, then ID.
func (m *Meta) Orgs() []Org {
	m.mu.RLock()
	out := make([]Org, 0, len(m.st.orgs))
	for _, o := range m.st.orgs {
		out = append(out, o)
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Org) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// OrgCount returns the number of orgs.
func (m *Meta) OrgCount() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.st.orgs)
}

// Settings returns the effective settings of an org: its overrides, def for
// the fields it has not set. An unknown org gets the defaults.
func (m *Meta) Settings(orgID string, def Plan) Settings {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.st.settings[orgID].Resolve(def)
}

// Keys returns an org's keys (revoked ones included) sorted by CreatedAt,
// then ID. Hashes are never returned.
func (m *Meta) Keys(orgID string) []KeyInfo {
	m.mu.RLock()
	ids := m.st.orgKeys[orgID]
	out := make([]KeyInfo, 0, len(ids))
	for _, id := range ids {
		out = append(out, m.st.keys[id].info)
	}
	m.mu.RUnlock()
	slices.SortStableFunc(out, func(a, b KeyInfo) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// Key returns one key by ID.
func (m *Meta) Key(keyID string) (KeyInfo, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	rec, ok := m.st.keys[keyID]
	return rec.info, ok
}

// Authenticate resolves a raw API key to its org and key IDs. A rejection is
// an *AuthError: missing_key (empty), placeholder_key, malformed_key,
// invalid_key (unknown, or the hash does not match), revoked_key. The hash is
// compared in constant time; the raw key is neither stored nor logged.
func (m *Meta) Authenticate(rawKey string) (orgID, keyID string, err error) {
	if rawKey == "" {
		return "", "", authError(ReasonMissingKey)
	}
	if err := CheckKeyFormat(rawKey); err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(rawKey))
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, id := range m.st.byPrefix[keyPublicPart(rawKey)] {
		rec := m.st.keys[id]
		if subtle.ConstantTimeCompare(rec.hash[:], sum[:]) != 1 {
			continue
		}
		if rec.info.Revoked {
			return "", "", authError(ReasonRevokedKey)
		}
		return rec.info.OrgID, rec.info.KeyID, nil
	}
	return "", "", authError(ReasonInvalidKey)
}

// snapshotVersion is the format Snapshot writes. Restore reads every version
// listed in restoreByVersion; testdata/ holds a golden snapshot of each.
const snapshotVersion = 1

// snapshotV1 is the version 1 snapshot: JSON, every list sorted by ID, so two
// replicas with the same state write the same bytes.
type snapshotV1 struct {
	Version      int               `json:"version"`
	AppliedIndex uint64            `json:"applied_index"`
	Cluster      *ClusterInfo      `json:"cluster"`
	Orgs         []snapOrgV1       `json:"orgs"`
	Keys         []snapKeyV1       `json:"keys"`
	Usage        *usageDay         `json:"usage,omitempty"`
	Nodes        map[string]string `json:"nodes,omitempty"`
	Chat         *snapChatV1       `json:"chat,omitempty"`
	OAuth        *snapOAuthV1      `json:"oauth,omitempty"`
	Console      *snapConsoleV1    `json:"console,omitempty"`
}

type snapOrgV1 struct {
	Org
	Settings SettingsOverride `json:"settings"`
}

type snapKeyV1 struct {
	KeyInfo
	Hash string `json:"sha256"` // hex
}

// Snapshot captures a deep copy of the state under the read lock and returns
// the function that writes it; that function touches no live state and may
// run concurrently with Apply.
func (m *Meta) Snapshot() (func(w io.Writer) error, error) {
	m.mu.RLock()
	snap := m.st.snapshot()
	m.mu.RUnlock()
	return func(w io.Writer) error {
		b, err := json.Marshal(snap)
		if err != nil {
			return fmt.Errorf("cannot encode meta snapshot: %w", err)
		}
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("cannot write meta snapshot: %w", err)
		}
		return nil
	}, nil
}

func (st *metaState) snapshot() snapshotV1 {
	snap := snapshotV1{
		Version:      snapshotVersion,
		AppliedIndex: st.applied,
		Cluster:      clonePtr(st.cluster),
		Orgs:         make([]snapOrgV1, 0, len(st.orgs)),
		Keys:         make([]snapKeyV1, 0, len(st.keys)),
		Usage:        st.usage.clone(),
		Nodes:        cloneNodes(st.nodes),
		Chat:         st.chat.snapshot(),
		OAuth:        st.oauth.snapshot(),
		Console:      st.console.snapshot(),
	}
	for _, id := range slices.Sorted(maps.Keys(st.orgs)) {
		snap.Orgs = append(snap.Orgs, snapOrgV1{Org: st.orgs[id], Settings: st.settings[id].clone()})
	}
	for _, id := range slices.Sorted(maps.Keys(st.keys)) {
		rec := st.keys[id]
		snap.Keys = append(snap.Keys, snapKeyV1{KeyInfo: rec.info, Hash: hex.EncodeToString(rec.hash[:])})
	}
	return snap
}

// restoreByVersion maps a snapshot version to its decoder.
var restoreByVersion = map[int]func([]byte) (*metaState, error){
	1: restoreV1,
}

// Restore replaces all state with the snapshot read from r. The new state is
// built aside and swapped in only when the whole snapshot is valid.
func (m *Meta) Restore(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("cannot read meta snapshot: %w", err)
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("cannot decode meta snapshot: %w: %w", ErrCorruptSnapshot, err)
	}
	decode, ok := restoreByVersion[head.Version]
	if !ok {
		return fmt.Errorf("cannot restore meta snapshot version %d: %w", head.Version, ErrSnapshotVersion)
	}
	st, err := decode(data)
	if err != nil {
		return fmt.Errorf("cannot restore meta snapshot: %w", err)
	}
	m.mu.Lock()
	m.st = st
	m.mu.Unlock()
	return nil
}

func restoreV1(data []byte) (*metaState, error) {
	var snap snapshotV1
	if err := json.Unmarshal(data, &snap); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
	}
	st := newMetaState()
	st.applied = snap.AppliedIndex
	st.cluster = clonePtr(snap.Cluster)
	if snap.Usage != nil {
		st.usage = *snap.Usage.clone()
	}
	st.nodes = cloneNodes(snap.Nodes)
	chat, chatErr := restoreChatV1(snap.Chat)
	if chatErr != nil {
		return nil, chatErr
	}
	st.chat = chat
	var err error
	if st.oauth, err = restoreOAuthV1(snap.OAuth); err != nil {
		return nil, err
	}
	if st.console, err = restoreConsoleV1(snap.Console); err != nil {
		return nil, err
	}
	for _, o := range snap.Orgs {
		if o.ID == "" {
			return nil, fmt.Errorf("%w: org without id", ErrCorruptSnapshot)
		}
		if _, dup := st.orgs[o.ID]; dup {
			return nil, fmt.Errorf("%w: duplicate org %s", ErrCorruptSnapshot, o.ID)
		}
		st.orgs[o.ID] = o.Org
		if o.Settings != (SettingsOverride{}) {
			st.settings[o.ID] = o.Settings.clone()
		}
	}
	for _, k := range snap.Keys {
		rec, err := restoreKeyV1(st, k)
		if err != nil {
			return nil, err
		}
		st.addKey(rec)
	}
	return st, nil
}

func restoreKeyV1(st *metaState, k snapKeyV1) (keyRecord, error) {
	if k.KeyID == "" || !isPublicPart(k.Prefix) {
		return keyRecord{}, fmt.Errorf("%w: bad key %q", ErrCorruptSnapshot, k.KeyID)
	}
	if _, dup := st.keys[k.KeyID]; dup {
		return keyRecord{}, fmt.Errorf("%w: duplicate key %s", ErrCorruptSnapshot, k.KeyID)
	}
	if _, ok := st.orgs[k.OrgID]; !ok {
		return keyRecord{}, fmt.Errorf("%w: key %s of unknown org %q", ErrCorruptSnapshot, k.KeyID, k.OrgID)
	}
	rec := keyRecord{info: k.KeyInfo}
	if len(k.Hash) != hex.EncodedLen(len(rec.hash)) {
		return keyRecord{}, fmt.Errorf("%w: bad hash of key %s", ErrCorruptSnapshot, k.KeyID)
	}
	if _, err := hex.Decode(rec.hash[:], []byte(k.Hash)); err != nil {
		return keyRecord{}, fmt.Errorf("%w: bad hash of key %s", ErrCorruptSnapshot, k.KeyID)
	}
	return rec, nil
}
