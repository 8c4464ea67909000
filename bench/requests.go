package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Operation names, as they appear in the report.
const (
	OpWrite      = "write"
	OpWriteBatch = "write_batch"
	OpSearch     = "search"
	OpFeedback   = "feedback"
	OpRecent     = "recent"
)

// domainSpan is how many generated atoms share a domain. The write gate
// scans the written domain, so one huge domain would make populating a
// million atoms quadratic; the texts of a stream go to domains
// <prefix>-000, <prefix>-001, ... of domainSpan atoms each, and searches
// (which have no domain filter) still cover the whole tenant.
const domainSpan = 10000

// domainOf returns the domain of item i of a stream: with domains > 0, one
// of that many domains shared by every stream (bench-d000...); else a
// domain of domainSpan texts of the stream.
func domainOf(stream, i, domains uint64) string {
	if domains > 0 {
		return fmt.Sprintf("bench-d%03d", i%domains)
	}
	prefix := "bench-p"
	if stream == StreamWrite {
		prefix = "bench-w"
	}
	return fmt.Sprintf("%s%03d", prefix, i/domainSpan)
}

type writeBody struct {
	Content string `json:"content"`
	Domain  string `json:"domain"`
}

type batchBody struct {
	Items []writeBody `json:"items"`
}

type readBody struct {
	Query string `json:"query"`
	TopK  int    `json:"top_k"`
}

type feedbackBody struct {
	AtomIDs []string `json:"atom_ids"`
	Outcome float64  `json:"outcome"`
}

type recentBody struct {
	Limit int `json:"limit"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs of strings and numbers are encoded
	}
	return b
}

var (
	storedFalse = []byte(`"stored":false`)
	emptyItems  = []byte(`"items":[]`)
	atomIDKey   = []byte(`"atom_id":"`)
)

// writeRequest stores one text; a write the gate refuses is tagged
// "filtered"; the new atom's ID goes to pool (when not nil).
func writeRequest(key string, item writeBody, pool *idPool) Request {
	return Request{Op: OpWrite, Method: "POST", Path: "/memory/write", Key: key,
		Body: mustJSON(item),
		OnResponse: func(status int, body []byte) string {
			if status != 200 {
				return ""
			}
			if bytes.Contains(body, storedFalse) {
				return "filtered"
			}
			pool.harvest(body)
			return ""
		}}
}

// batchRequest stores texts through /memory/write-batch; an answer with
// any refused item is tagged "batch_partly_filtered".
func batchRequest(key string, items []writeBody, pool *idPool) Request {
	return Request{Op: OpWriteBatch, Method: "POST", Path: "/memory/write-batch", Key: key,
		Body: mustJSON(batchBody{Items: items}),
		OnResponse: func(status int, body []byte) string {
			if status != 200 {
				return ""
			}
			pool.harvest(body)
			if bytes.Contains(body, storedFalse) {
				return "batch_partly_filtered"
			}
			return ""
		}}
}

// searchRequest reads the top 10 for query; an empty answer is tagged
// "empty" and the best hit's ID goes to pool (when not nil).
func searchRequest(key, query string, pool *idPool) Request {
	return Request{Op: OpSearch, Method: "POST", Path: "/memory/read", Key: key,
		Body: mustJSON(readBody{Query: query, TopK: 10}),
		OnResponse: func(status int, body []byte) string {
			if status != 200 {
				return ""
			}
			if bytes.Contains(body, emptyItems) {
				return "empty"
			}
			pool.harvestFirst(body)
			return ""
		},
		ServerTime: searchTime}
}

var searchTimeKey = []byte(`"search_time_ms":`)

// maxServerMs is the largest server time searchTime accepts: a day.
const maxServerMs = 24 * 60 * 60 * 1000

// searchTime reads search_time_ms from a read answer without decoding the
// rest. It takes the key's last occurrence: the field follows the items (an
// item's metadata may hold the same key), as hebb writes it.
func searchTime(body []byte) (time.Duration, bool) {
	i := bytes.LastIndex(body, searchTimeKey)
	if i < 0 {
		return 0, false
	}
	num := bytes.TrimLeft(body[i+len(searchTimeKey):], " \t\r\n")
	end := bytes.IndexAny(num, ",} \t\r\n")
	if end < 0 {
		return 0, false
	}
	ms, err := strconv.ParseFloat(string(num[:end]), 64)
	if err != nil || !(ms >= 0 && ms <= maxServerMs) { // NaN fails both
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// items returns texts [from, to) of a stream as write items.
func (g *TextGen) items(stream, from, to uint64) []writeBody {
	out := make([]writeBody, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, writeBody{Content: g.Text(stream, i), Domain: domainOf(stream, i, g.domains)})
	}
	return out
}

func feedbackRequest(key string, ids []string, outcome float64) Request {
	return Request{Op: OpFeedback, Method: "POST", Path: "/memory/feedback", Key: key,
		Body: mustJSON(feedbackBody{AtomIDs: ids, Outcome: outcome})}
}

func recentRequest(key string) Request {
	return Request{Op: OpRecent, Method: "POST", Path: "/memory/recent", Key: key,
		Body: mustJSON(recentBody{Limit: 20})}
}

// idPool is a bounded ring of atom IDs seen in answers, for feedback. A nil
// pool ignores everything. It is safe for concurrent use.
type idPool struct {
	mu   sync.Mutex
	ids  []string
	next int
}

const idPoolSize = 4096

func newIDPool() *idPool { return &idPool{ids: make([]string, 0, idPoolSize)} }

func (p *idPool) add(id string) {
	if p == nil || id == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) < idPoolSize {
		p.ids = append(p.ids, id)
		return
	}
	p.ids[p.next] = id
	p.next = (p.next + 1) % idPoolSize
}

// harvest adds every "atom_id":"..." value of body.
func (p *idPool) harvest(body []byte) {
	for p != nil {
		at := bytes.Index(body, atomIDKey)
		if at < 0 {
			return
		}
		body = body[at+len(atomIDKey):]
		end := bytes.IndexByte(body, '"')
		if end < 0 {
			return
		}
		p.add(string(body[:end]))
		body = body[end:]
	}
}

// harvestFirst adds the first atom_id of body.
func (p *idPool) harvestFirst(body []byte) {
	if p == nil {
		return
	}
	if at := bytes.Index(body, atomIDKey); at >= 0 {
		body = body[at+len(atomIDKey):]
		if end := bytes.IndexByte(body, '"'); end >= 0 {
			p.add(string(body[:end]))
		}
	}
}

// pick returns up to n distinct IDs drawn at random; none when the pool is
// empty.
func (p *idPool) pick(rng *rand.Rand, n int) []string {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, n)
	for range n {
		if len(p.ids) == 0 {
			break
		}
		if id := p.ids[rng.IntN(len(p.ids))]; !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func (p *idPool) len() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids)
}
