package router

import (
	"container/list"
	"runtime"
	"sync"
	"time"
	"weak"
)

// Bounds of the render reply cache (per node, in memory).
const (
	replyTTL         = 24 * time.Hour
	maxRepliesPerOrg = 1024
	maxReplyBytes    = 64 << 20
)

// replyCache keeps render replies by (account, request_id) for replyTTL so
// that a repeat gets the same reply. It lives on one node: a repeat that
// another node answers is rendered again. Bounded per account (oldest
// evicted first) and in total bytes: over them, the oldest reply of the
// account holding the most bytes goes, so that one account's large
// renders evict its own replies, not every other account's.
type replyCache struct {
	mu       sync.Mutex
	ttl      time.Duration
	perOrg   int
	maxBytes int
	bytes    int
	stored   uint64 // entries stored so far: the next entry's seq
	entries  map[replyKey]*replyEntry
	order    *list.List            // stored entries, oldest first
	orgs     map[string]*list.List // stored entries of each account, oldest first
	orgBytes map[string]int        // bytes stored for each account
}

type replyKey struct{ org, requestID string }

// replyEntry is a reply being rendered (done open) or stored.
type replyEntry struct {
	key     replyKey
	hash    [32]byte
	done    chan struct{}
	body    []byte      // nil until stored; stays nil when the render failed
	shown   []shownAtom // the memories body shows, set by the owner before finish
	expires time.Time
	seq     uint64        // order of storing: replies stored in one clock tick still have an oldest
	elem    *list.Element // in order
	orgElem *list.Element // in orgs[key.org]
}

func newReplyCache(ttl time.Duration, perOrg, maxBytes int) *replyCache {
	return &replyCache{ttl: ttl, perOrg: perOrg, maxBytes: maxBytes, entries: map[replyKey]*replyEntry{},
		order: list.New(), orgs: map[string]*list.List{}, orgBytes: map[string]int{}}
}

// reply is the stored body once done is closed (nil: the render failed).
func (e *replyEntry) reply() []byte {
	select {
	case <-e.done:
		return e.body
	default:
		return nil
	}
}

// begin looks key up. A new key (or an expired one) gets an entry the
// caller owns: it renders, then calls finish. A key in flight or stored is
// returned to wait on; a different request under the key is a conflict.
func (rc *replyCache) begin(key replyKey, hash [32]byte, now time.Time) (*replyEntry, bool, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.expire(now)
	if e, ok := rc.entries[key]; ok {
		if e.hash != hash {
			return nil, false, &renderError{status: 409, code: renderIDConflict, field: "request_id",
				message: "request_id was already used with a different request"}
		}
		return e, false, nil
	}
	e := &replyEntry{key: key, hash: hash, done: make(chan struct{})}
	rc.entries[key] = e
	return e, true, nil
}

// finish stores body under e's key (or forgets the key when body is nil)
// and wakes whoever waits on it.
func (rc *replyCache) finish(e *replyEntry, body []byte, now time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	defer close(e.done)
	if body == nil {
		delete(rc.entries, e.key)
		return
	}
	e.body, e.expires, e.seq = body, now.Add(rc.ttl), rc.stored
	rc.stored++
	e.elem = rc.order.PushBack(e)
	l := rc.orgs[e.key.org]
	if l == nil {
		l = list.New()
		rc.orgs[e.key.org] = l
	}
	e.orgElem = l.PushBack(e)
	rc.bytes += len(body)
	rc.orgBytes[e.key.org] += len(body)
	for l.Len() > rc.perOrg {
		rc.remove(l.Front().Value.(*replyEntry))
	}
	for rc.bytes > rc.maxBytes && rc.order.Len() > 0 {
		rc.remove(rc.heaviest().Front().Value.(*replyEntry))
	}
}

// heaviest returns the stored entries of the account holding the most
// bytes; of accounts holding as many, the one whose oldest entry was
// stored first (by seq: map order or equal clock readings must not decide).
func (rc *replyCache) heaviest() *list.List {
	var top *list.List
	most := -1
	for org, n := range rc.orgBytes {
		l := rc.orgs[org]
		if n > most || n == most && l.Front().Value.(*replyEntry).seq < top.Front().Value.(*replyEntry).seq {
			top, most = l, n
		}
	}
	return top
}

// forget drops e if it is still the stored reply of its key: the next
// request under the key renders again.
func (rc *replyCache) forget(e *replyEntry) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if e.body != nil && rc.entries[e.key] == e {
		rc.remove(e)
	}
}

// expire drops stored entries past their time (all share one TTL, so the
// oldest are at the front).
func (rc *replyCache) expire(now time.Time) {
	for rc.order.Len() > 0 {
		e := rc.order.Front().Value.(*replyEntry)
		if now.Before(e.expires) {
			return
		}
		rc.remove(e)
	}
}

func (rc *replyCache) remove(e *replyEntry) {
	rc.order.Remove(e.elem)
	l := rc.orgs[e.key.org]
	l.Remove(e.orgElem)
	rc.orgBytes[e.key.org] -= len(e.body)
	if l.Len() == 0 {
		delete(rc.orgs, e.key.org)
		delete(rc.orgBytes, e.key.org)
	}
	rc.bytes -= len(e.body)
	if rc.entries[e.key] == e {
		delete(rc.entries, e.key)
	}
}

// len is the number of stored replies.
func (rc *replyCache) len() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.order.Len()
}

// renderCaches holds each Server's reply cache, dropped with the Server.
var renderCaches sync.Map // weak.Pointer[Server] → *replyCache

func (s *Server) renderReplies() *replyCache {
	k := weak.Make(s)
	if v, ok := renderCaches.Load(k); ok {
		return v.(*replyCache)
	}
	v, loaded := renderCaches.LoadOrStore(k, newReplyCache(replyTTL, maxRepliesPerOrg, maxReplyBytes))
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[Server]) { renderCaches.Delete(k) }, k)
	}
	return v.(*replyCache)
}
