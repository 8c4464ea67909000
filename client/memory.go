package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"time"
)

// Provenance is the authorship record of a room atom.
type Provenance struct {
	Principal  string    `json:"principal"` // the writer's org_id
	Agent      string    `json:"agent"`
	ClientEnv  string    `json:"client_env"`
	IsExternal bool      `json:"is_external"` // the writer is not the room owner
	RecordedAt time.Time `json:"recorded_at"`
}

// WriteRequest is one atom to store (POST /memory/write and one item of the
// batch routes). Empty strings and nil slices are not sent.
type WriteRequest struct {
	Content  string   `json:"content"`
	Concepts []string `json:"concepts,omitempty"`
	// Domain defaults to "general"; "xroom:<room_id>" addresses a room.
	Domain string `json:"domain,omitempty"`
	// Metadata is any JSON object: a map, a struct or a json.RawMessage.
	Metadata    any    `json:"metadata,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// ExternalRef makes the write idempotent; it must not start with "secret:".
	ExternalRef string `json:"external_ref,omitempty"`
	// Supersedes lists atoms this one replaces (single write only, not rooms).
	Supersedes []string `json:"supersedes,omitempty"`
	// Author is honoured only for service integrations.
	Author any `json:"author,omitempty"`
}

// WriteResult is the answer of POST /memory/write.
type WriteResult struct {
	Stored     bool     `json:"stored"`
	AtomID     *string  `json:"atom_id"` // nil when the gate refused the write
	Importance float64  `json:"importance"`
	Reason     string   `json:"reason"`
	Superseded []string `json:"superseded"`
}

// ID is the stored (or existing) atom's ID, "" when there is none.
func (r *WriteResult) ID() string { return deref(r.AtomID) }

// Write stores one atom (POST /memory/write). It is not repeated after a
// transport error; set ExternalRef to make a manual retry safe.
func (c *Client) Write(ctx context.Context, req WriteRequest) (*WriteResult, error) {
	var out WriteResult
	if err := c.post(ctx, "/memory/write", req, false, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// BatchWriteRequest is the body of the batch routes: 1 to 500 items.
type BatchWriteRequest struct {
	Items []WriteRequest `json:"items"`
	// IdempotencyKey is sent as the Idempotency-Key header of WriteBatch;
	// empty: one is generated for the call and reused by its retries.
	IdempotencyKey string `json:"-"`
}

// BatchItemResult is one item of a batch answer.
type BatchItemResult struct {
	Index      int     `json:"index"`
	Stored     bool    `json:"stored"`
	AtomID     *string `json:"atom_id"`
	Importance float64 `json:"importance"`
	Reason     string  `json:"reason"`
	// Error is the item's error object, nil when the item succeeded.
	Error json.RawMessage `json:"error"`
}

// Failed reports a per-item error.
func (r *BatchItemResult) Failed() bool {
	return len(r.Error) > 0 && string(r.Error) != "null"
}

// BatchWriteResult is the answer of the batch routes.
type BatchWriteResult struct {
	TotalCount  int               `json:"total_count"`
	StoredCount int               `json:"stored_count"`
	Results     []BatchItemResult `json:"results"`
	// IdempotencyKey is the key WriteBatch sent (not part of the answer).
	IdempotencyKey string `json:"-"`
}

// WriteBatch stores up to 500 atoms of the caller's own account in one
// request (POST /memory/write-batch). It always sends an Idempotency-Key,
// so it is retried after transport errors too: the server answers a
// repeated key with the first answer instead of writing again.
func (c *Client) WriteBatch(ctx context.Context, req BatchWriteRequest) (*BatchWriteResult, error) {
	key := req.IdempotencyKey
	if key == "" {
		key = c.c.newKey()
	}
	r := &request{method: http.MethodPost, path: "/memory/write-batch", body: req, safe: true,
		header: http.Header{"Idempotency-Key": {key}}}
	var out BatchWriteResult
	if err := c.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	out.IdempotencyKey = key
	return &out, nil
}

// WriteBatchRooms stores up to 500 atoms whose domains may be room addresses
// (POST /memory/write_batch). That route has no idempotency: it is retried
// only when the server says so, never after a transport error.
func (c *Client) WriteBatchRooms(ctx context.Context, req BatchWriteRequest) (*BatchWriteResult, error) {
	var out BatchWriteResult
	if err := c.post(ctx, "/memory/write_batch", req, false, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReadRequest is a search (POST /memory/read and one query of read-batch).
type ReadRequest struct {
	Query string `json:"query"`
	// TopK is 1 to 500 (default 10), a target, not a hard cap.
	TopK *int `json:"top_k,omitempty"`
	// Domain filters by domain; empty means all private domains.
	Domain              string   `json:"domain,omitempty"`
	MinRelevance        *float64 `json:"min_relevance,omitempty"`        // default 0.3
	IncludeAssociations *bool    `json:"include_associations,omitempty"` // default true
	IncludeHistory      bool     `json:"include_history,omitempty"`
	Diversity           *float64 `json:"diversity,omitempty"` // 0 to 1, default 0
	Concepts            []string `json:"concepts,omitempty"`
	Fingerprint         string   `json:"fingerprint,omitempty"`
	IncludeTimings      bool     `json:"include_timings,omitempty"`
	AuthorPrincipal     string   `json:"author_principal,omitempty"`
	AuthorAgent         string   `json:"author_agent,omitempty"`
	AuthorClientEnv     string   `json:"author_client_env,omitempty"`
	AuthorIsExternal    *bool    `json:"author_is_external,omitempty"`
}

// MemoryItem is one search result.
type MemoryItem struct {
	AtomID     string          `json:"atom_id"`
	Content    string          `json:"content"`
	Relevance  float64         `json:"relevance"`
	Similarity float64         `json:"similarity"`
	Valence    float64         `json:"valence"`
	Importance float64         `json:"importance"`
	Source     string          `json:"source"` // semantic, concept_scoped, hebbian_retrieval, episodic, ...
	Concepts   []string        `json:"concepts"`
	Domain     string          `json:"domain"`
	Metadata   json.RawMessage `json:"metadata"`
	Provenance *Provenance     `json:"provenance,omitempty"`
	Supersedes []string        `json:"supersedes,omitempty"`
	// SupersededBy is set when the item is history, nil on a live tip.
	SupersededBy *string   `json:"superseded_by,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// ReadResponse is the answer of read and query.
type ReadResponse struct {
	Items            []MemoryItem `json:"items"`
	EpisodicHit      bool         `json:"episodic_hit"`
	QueryConcepts    []string     `json:"query_concepts"`
	ExpandedConcepts []string     `json:"expanded_concepts"`
	SearchTimeMs     float64      `json:"search_time_ms"`
	// With IncludeTimings only.
	DiversityMs   *float64 `json:"diversity_ms,omitempty"`
	NDBRoundtrips *int     `json:"n_db_roundtrips,omitempty"`
	EmbedMs       *float64 `json:"embed_ms,omitempty"`
}

// Read searches memories (POST /memory/read).
func (c *Client) Read(ctx context.Context, req ReadRequest) (*ReadResponse, error) {
	var out ReadResponse
	if err := c.post(ctx, "/memory/read", req, true, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

type readBatchRequest struct {
	Queries []ReadRequest `json:"queries"`
}

type readBatchResponse struct {
	Results []ReadResponse `json:"results"`
}

// ReadBatch runs 1 to 50 searches of the caller's own account in one
// request (POST /memory/read-batch); results are in query order.
func (c *Client) ReadBatch(ctx context.Context, queries []ReadRequest) ([]ReadResponse, error) {
	var out readBatchResponse
	if err := c.post(ctx, "/memory/read-batch", readBatchRequest{Queries: queries}, true, &out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// Condition is one metadata_filter entry: Op is eq, contains or in (Value
// an array for in); Field is a metadata key, dotted for nesting.
type Condition struct {
	Field string `json:"field"`
	Op    string `json:"op"`
	Value any    `json:"value"`
}

// QueryRequest is POST /memory/query: a search over several private
// domains with metadata conditions (ANDed).
type QueryRequest struct {
	Query               string      `json:"query"`
	Domains             []string    `json:"domains,omitempty"`
	MetadataFilter      []Condition `json:"metadata_filter,omitempty"`
	TopK                *int        `json:"top_k,omitempty"`
	MinRelevance        *float64    `json:"min_relevance,omitempty"`
	IncludeAssociations *bool       `json:"include_associations,omitempty"`
	IncludeHistory      bool        `json:"include_history,omitempty"`
	Diversity           *float64    `json:"diversity,omitempty"`
	Concepts            []string    `json:"concepts,omitempty"`
}

// Query runs POST /memory/query.
func (c *Client) Query(ctx context.Context, req QueryRequest) (*ReadResponse, error) {
	var out ReadResponse
	if err := c.post(ctx, "/memory/query", req, true, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RecentRequest is one page of the queryless feed (POST /memory/recent).
type RecentRequest struct {
	Domain         string     `json:"domain,omitempty"` // empty: every private domain
	Since          *time.Time `json:"since,omitempty"`  // inclusive
	Until          *time.Time `json:"until,omitempty"`  // inclusive
	ExcludeAuthor  string     `json:"exclude_author,omitempty"`
	IncludeHistory bool       `json:"include_history,omitempty"`
	Limit          int        `json:"limit,omitempty"` // 1 to 100, 0: server default 20
	Cursor         string     `json:"cursor,omitempty"`
}

// RecentItem is one feed entry.
type RecentItem struct {
	AtomID       string      `json:"atom_id"`
	Content      string      `json:"content"`
	Domain       string      `json:"domain"`
	CreatedAt    time.Time   `json:"created_at"`
	Concepts     []string    `json:"concepts"`
	Provenance   *Provenance `json:"provenance,omitempty"`
	Supersedes   []string    `json:"supersedes,omitempty"`
	SupersededBy *string     `json:"superseded_by,omitempty"`
}

// RecentResponse is one page, newest first; NextCursor is nil at the end.
type RecentResponse struct {
	Items      []RecentItem `json:"items"`
	NextCursor *string      `json:"next_cursor"`
}

// Recent reads one page of the feed.
func (c *Client) Recent(ctx context.Context, req RecentRequest) (*RecentResponse, error) {
	var out RecentResponse
	if err := c.post(ctx, "/memory/recent", req, true, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RecentAll walks the feed from req's cursor to its end, page by page,
// yielding each entry newest first. A failed page is yielded as an error
// and ends the walk.
func (c *Client) RecentAll(ctx context.Context, req RecentRequest) iter.Seq2[RecentItem, error] {
	return func(yield func(RecentItem, error) bool) {
		for {
			page, err := c.Recent(ctx, req)
			if err != nil {
				yield(RecentItem{}, err)
				return
			}
			for _, it := range page.Items {
				if !yield(it, nil) {
					return
				}
			}
			if page.NextCursor == nil || *page.NextCursor == "" || len(page.Items) == 0 {
				return // "" would start again from the newest
			}
			req.Cursor = *page.NextCursor
		}
	}
}

// GraphRequest is a bounded read of the association graph (POST /memory/graph).
type GraphRequest struct {
	Seeds  []string `json:"seeds"`
	Depth  int      `json:"depth,omitempty"`  // 1 to 3, 0: server default 1
	Domain string   `json:"domain,omitempty"` // only a room address has an effect
	// MinWeight nil means the server's floor; an explicit 0 is honoured.
	MinWeight *float64 `json:"min_weight,omitempty"`
	Limit     int      `json:"limit,omitempty"` // 1 to 500, 0: server default 100
}

// GraphNode is a concept and its degree within the answer.
type GraphNode struct {
	Concept string `json:"concept"`
	Degree  int    `json:"degree"`
}

// GraphEdge is one undirected association row.
type GraphEdge struct {
	Source    string    `json:"source"`
	Target    string    `json:"target"`
	Weight    float64   `json:"weight"`
	Valence   float64   `json:"valence"`
	Count     int64     `json:"count"`
	UpdatedAt time.Time `json:"updated_at"`
}

// GraphResponse is the answer of POST /memory/graph.
type GraphResponse struct {
	Nodes            []GraphNode `json:"nodes"`
	Edges            []GraphEdge `json:"edges"`
	Truncated        bool        `json:"truncated"`
	MinWeightApplied float64     `json:"min_weight_applied"`
}

// Graph reads the concept-association graph around seeds.
func (c *Client) Graph(ctx context.Context, req GraphRequest) (*GraphResponse, error) {
	var out GraphResponse
	if err := c.post(ctx, "/memory/graph", req, true, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// FeedbackRequest reports an outcome in [-1, 1] on retrieved atoms.
type FeedbackRequest struct {
	AtomIDs       []string `json:"atom_ids"`
	Outcome       float64  `json:"outcome"`
	Concepts      []string `json:"concepts,omitempty"`
	QueryConcepts []string `json:"query_concepts,omitempty"`
	Domain        string   `json:"domain,omitempty"`
}

// FeedbackResult is the answer of POST /memory/feedback.
type FeedbackResult struct {
	UpdatedCount      int     `json:"updated_count"`
	AvgValence        float64 `json:"avg_valence"`
	CoactivationEdges int     `json:"coactivation_edges"`
	FeedbackTimeMs    float64 `json:"feedback_time_ms"`
}

// Feedback sends outcome feedback (POST /memory/feedback). It is not
// repeated after a transport error: a second delivery would count twice.
func (c *Client) Feedback(ctx context.Context, req FeedbackRequest) (*FeedbackResult, error) {
	var out FeedbackResult
	if err := c.post(ctx, "/memory/feedback", req, false, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ConsolidateResult is the answer of POST /memory/consolidate.
type ConsolidateResult struct {
	Domain              string  `json:"domain"`
	AtomsBefore         int     `json:"atoms_before"`
	AtomsAfter          int     `json:"atoms_after"`
	PrototypesCreated   int     `json:"prototypes_created"`
	SingletonsProtected int     `json:"singletons_protected"`
	CompressionRatio    float64 `json:"compression_ratio"`
	DurationMs          float64 `json:"duration_ms"`
}

type consolidateRequest struct {
	Domain string `json:"domain,omitempty"`
}

// Consolidate groups a domain's similar memories ("" is general). Unless
// the operator enabled it, the server answers 503 with details.reason
// consolidation_disabled (ReasonOf(err)).
func (c *Client) Consolidate(ctx context.Context, domain string) (*ConsolidateResult, error) {
	var out ConsolidateResult
	if err := c.post(ctx, "/memory/consolidate", consolidateRequest{Domain: domain}, false, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
