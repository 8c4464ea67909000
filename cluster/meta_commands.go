package cluster

import (
	"encoding/json"
	"fmt"
	"time"
)

// Command types: the first byte of a meta command. The values are part of the
// Raft log format and never change; a new command gets a new value.
const (
	cmdInitCluster    byte = 1
	cmdCreateOrg      byte = 2
	cmdCreateKey      byte = 3
	cmdRevokeKey      byte = 4
	cmdUpdateSettings byte = 5
	cmdAddUsage       byte = 6
	cmdSetNodeState   byte = 7
	// 20-29: the chat commands, in chat_meta.go.
	// 32-39: the OAuth commands, in oauth_meta.go.
)

// InitCluster records the cluster. The first one wins; a later one returns the
// existing ClusterInfo unchanged. Result: ClusterInfo.
type InitCluster struct {
	ClusterID string    `json:"cluster_id"`
	Embedder  string    `json:"embedder"`
	Dim       int       `json:"dim"`
	Groups    int       `json:"groups"`
	CreatedAt time.Time `json:"created_at"`
}

// NewKey is a key to store: made by NewKeyRecord, never the raw key.
type NewKey struct {
	KeyID     string    `json:"key_id"`
	OrgID     string    `json:"org_id"`
	Label     string    `json:"label"`
	Prefix    string    `json:"prefix"`
	Hash      [32]byte  `json:"hash"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateOrg creates an org and, when Key is set, its first key (all or
// nothing). Key.OrgID may be empty; otherwise it must equal OrgID.
// Result: Org, or ErrOrgExists, ErrKeyExists, ErrInvalidCommand.
type CreateOrg struct {
	OrgID     string    `json:"org_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	Key       *NewKey   `json:"key,omitempty"`
}

// CreateKey adds a key to an existing org.
// Result: KeyInfo, or ErrUnknownOrg, ErrKeyExists, ErrInvalidCommand.
type CreateKey struct {
	NewKey
}

// RevokeKey revokes a key. Revoking a revoked key changes nothing (the first
// revocation time stays). Result: KeyInfo, or ErrUnknownKey.
type RevokeKey struct {
	KeyID string    `json:"key_id"`
	At    time.Time `json:"at"`
}

// UpdateSettings changes an org's settings; a nil field is left unchanged.
// Limits must not be negative (0 = unlimited).
// Result: the org's SettingsOverride, or ErrUnknownOrg, ErrInvalidCommand.
type UpdateSettings struct {
	OrgID           string `json:"org_id"`
	HideReplaced    *bool  `json:"hide_replaced,omitempty"`
	DailyQueryQuota *int64 `json:"daily_query_quota,omitempty"`
	AtomLimit       *int64 `json:"atom_limit,omitempty"`
}

// EncodeInitCluster encodes an InitCluster command.
func EncodeInitCluster(c InitCluster) []byte { return encodeCommand(cmdInitCluster, c) }

// EncodeCreateOrg encodes a CreateOrg command.
func EncodeCreateOrg(c CreateOrg) []byte { return encodeCommand(cmdCreateOrg, c) }

// EncodeCreateKey encodes a CreateKey command.
func EncodeCreateKey(c CreateKey) []byte { return encodeCommand(cmdCreateKey, c) }

// EncodeRevokeKey encodes a RevokeKey command.
func EncodeRevokeKey(c RevokeKey) []byte { return encodeCommand(cmdRevokeKey, c) }

// EncodeUpdateSettings encodes an UpdateSettings command.
func EncodeUpdateSettings(c UpdateSettings) []byte { return encodeCommand(cmdUpdateSettings, c) }

// encodeCommand returns typ followed by the JSON of payload. Marshalling these
// plain structs fails only for a time outside years 0-9999, which no caller
// produces: that is a bug and panics.
func encodeCommand(typ byte, payload any) []byte {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Errorf("cluster: cannot encode meta command %d: %w", typ, err))
	}
	return append([]byte{typ}, b...)
}

// decoders is the dispatch table: command type -> decode the payload into a
// function applying it to the state.
var decoders = map[byte]func(payload []byte) func(*metaState) any{
	cmdInitCluster:    decodeWith((*metaState).initCluster),
	cmdCreateOrg:      decodeWith((*metaState).createOrg),
	cmdCreateKey:      decodeWith((*metaState).createKey),
	cmdRevokeKey:      decodeWith((*metaState).revokeKey),
	cmdUpdateSettings: decodeWith((*metaState).updateSettings),
	cmdAddUsage:       decodeWith((*metaState).addUsage),
	cmdSetNodeState:   decodeWith((*metaState).setNodeState),
}

func decodeWith[C any](apply func(*metaState, C) any) func([]byte) func(*metaState) any {
	return func(payload []byte) func(*metaState) any {
		var c C
		if err := json.Unmarshal(payload, &c); err != nil {
			panic(fmt.Errorf("cluster: cannot decode meta command payload: %w", err))
		}
		return func(st *metaState) any { return apply(st, c) }
	}
}

// decodeCommand decodes cmd, panicking when it is not a command this package
// encoded: the log holds only what the Encode* functions produce.
func decodeCommand(cmd []byte) func(*metaState) any {
	if len(cmd) == 0 {
		panic("cluster: empty meta command")
	}
	decode, ok := decoders[cmd[0]]
	if !ok {
		panic(fmt.Sprintf("cluster: unknown meta command type %d", cmd[0]))
	}
	return decode(cmd[1:])
}

func (st *metaState) initCluster(c InitCluster) any {
	if st.cluster != nil {
		return *st.cluster
	}
	if c.ClusterID == "" || c.Embedder == "" || c.Dim <= 0 || c.Groups <= 0 {
		return fmt.Errorf("cannot init cluster: cluster id, embedder, dim and groups are required: %w", ErrInvalidCommand)
	}
	info := ClusterInfo{
		ClusterID: c.ClusterID,
		Embedder:  c.Embedder,
		Dim:       c.Dim,
		Groups:    c.Groups,
		CreatedAt: c.CreatedAt.UTC(),
	}
	st.cluster = &info
	return info
}

func (st *metaState) createOrg(c CreateOrg) any {
	if c.OrgID == "" {
		return fmt.Errorf("cannot create org: empty org id: %w", ErrInvalidCommand)
	}
	if _, ok := st.orgs[c.OrgID]; ok {
		return fmt.Errorf("cannot create org %s: %w", c.OrgID, ErrOrgExists)
	}
	var rec *keyRecord
	if c.Key != nil {
		k := *c.Key
		if k.OrgID == "" {
			k.OrgID = c.OrgID
		}
		if k.OrgID != c.OrgID {
			return fmt.Errorf("cannot create org %s: its key names org %s: %w", c.OrgID, k.OrgID, ErrInvalidCommand)
		}
		r, err := st.checkNewKey(k)
		if err != nil {
			return fmt.Errorf("cannot create org %s: %w", c.OrgID, err)
		}
		rec = &r
	}
	org := Org{ID: c.OrgID, Name: c.Name, CreatedAt: c.CreatedAt.UTC()}
	st.orgs[org.ID] = org
	if rec != nil {
		st.addKey(*rec)
	}
	return org
}

func (st *metaState) createKey(c CreateKey) any {
	if _, ok := st.orgs[c.OrgID]; !ok {
		return fmt.Errorf("cannot create key %s: org %q: %w", c.KeyID, c.OrgID, ErrUnknownOrg)
	}
	rec, err := st.checkNewKey(c.NewKey)
	if err != nil {
		return err
	}
	st.addKey(rec)
	return rec.info
}

// checkNewKey validates a key to add (its org is checked by the caller) and
// returns the record to store.
func (st *metaState) checkNewKey(k NewKey) (keyRecord, error) {
	if k.KeyID == "" || !isPublicPart(k.Prefix) {
		return keyRecord{}, fmt.Errorf("cannot create key %q: need a key id and a %d-character prefix: %w",
			k.KeyID, keyPublicLen, ErrInvalidCommand)
	}
	if _, ok := st.keys[k.KeyID]; ok {
		return keyRecord{}, fmt.Errorf("cannot create key %s: %w", k.KeyID, ErrKeyExists)
	}
	return keyRecord{
		info: KeyInfo{
			KeyID:     k.KeyID,
			OrgID:     k.OrgID,
			Label:     k.Label,
			Prefix:    k.Prefix,
			CreatedAt: k.CreatedAt.UTC(),
		},
		hash: k.Hash,
	}, nil
}

// isPublicPart reports whether p can be the public prefix of a key.
func isPublicPart(p string) bool {
	if len(p) != keyPublicLen {
		return false
	}
	for i := 0; i < len(p); i++ {
		if !isURLSafe(p[i]) {
			return false
		}
	}
	return true
}

func (st *metaState) revokeKey(c RevokeKey) any {
	rec, ok := st.keys[c.KeyID]
	if !ok {
		return fmt.Errorf("cannot revoke key %q: %w", c.KeyID, ErrUnknownKey)
	}
	if !rec.info.Revoked {
		rec.info.Revoked = true
		rec.info.RevokedAt = c.At.UTC()
		st.keys[c.KeyID] = rec
		st.oauth.revokeKeyGrants(c.KeyID) // tokens a sign-in with the key got
	}
	return rec.info
}

func (st *metaState) updateSettings(c UpdateSettings) any {
	if _, ok := st.orgs[c.OrgID]; !ok {
		return fmt.Errorf("cannot update settings of org %q: %w", c.OrgID, ErrUnknownOrg)
	}
	if c.DailyQueryQuota != nil && *c.DailyQueryQuota < 0 || c.AtomLimit != nil && *c.AtomLimit < 0 {
		return fmt.Errorf("cannot update settings of org %s: negative limit: %w", c.OrgID, ErrInvalidCommand)
	}
	o := st.settings[c.OrgID].clone()
	if c.HideReplaced != nil {
		o.HideReplaced = clonePtr(c.HideReplaced)
	}
	if c.DailyQueryQuota != nil {
		o.DailyQueryQuota = clonePtr(c.DailyQueryQuota)
	}
	if c.AtomLimit != nil {
		o.AtomLimit = clonePtr(c.AtomLimit)
	}
	st.settings[c.OrgID] = o
	return o.clone()
}
