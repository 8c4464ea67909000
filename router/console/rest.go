package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// apiError is a REST answer of 400 or more, decoded from the envelope.
type apiError struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
	Details struct {
		Errors []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		} `json:"errors"`
		Reason string `json:"reason"`
	} `json:"details"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// Text is the message to show a person: the first validation error when
// there is one.
func (e *apiError) Text() string {
	if e.Details.Reason == "daily_query_quota" {
		return "The workspace's daily query quota is used up: searches and the feed count against it. It starts again at " +
			"midnight UTC, in " + span(time.Until(nextMidnightUTC(time.Now()))) + "; a memory's own page still opens."
	}
	if len(e.Details.Errors) > 0 {
		d := e.Details.Errors[0]
		if n := len(d.Loc); n > 0 {
			return fmt.Sprintf("%v: %s", d.Loc[n-1], d.Msg)
		}
		return d.Msg
	}
	return e.Message
}

// rest runs one REST call as org; a body of in is sent as JSON, a 2xx
// answer decoded into out.
func (c *Console) rest(ctx context.Context, org, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("cannot encode %s %s: %w", method, path, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	status, resp := c.b.REST(ctx, org, method, path, body)
	if status >= 400 || status == 0 {
		e := &apiError{Status: status}
		if json.Unmarshal(resp, e) != nil || e.Message == "" {
			e.Message = http.StatusText(status)
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp, out); err != nil {
		return fmt.Errorf("cannot decode %s %s: %w", method, path, err)
	}
	return nil
}

// failAPI shows the error page of a failed REST call.
func (c *Console) failAPI(w http.ResponseWriter, r *http.Request, v *view, err error) {
	if e, ok := err.(*apiError); ok { //nolint:errorlint // rest returns it unwrapped
		status := e.Status
		if status == 0 {
			status = http.StatusBadGateway
		}
		c.fail(w, r, v, status, e.Text())
		return
	}
	c.log.Error("console: request failed", "path", r.URL.Path, "err", err)
	c.fail(w, r, v, http.StatusInternalServerError, "Something went wrong; try again.")
}

// nextMidnightUTC is when the daily query quota of now's day ends.
func nextMidnightUTC(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
}

// Shapes of the REST answers the pages read (interface §2, operator §4-5).
type (
	provenance struct {
		Principal string `json:"principal"`
		Agent     string `json:"agent"`
		ClientEnv string `json:"client_env"`
	}
	recentItem struct {
		AtomID       string      `json:"atom_id"`
		Content      string      `json:"content"`
		Domain       string      `json:"domain"`
		CreatedAt    time.Time   `json:"created_at"`
		Concepts     []string    `json:"concepts"`
		Provenance   *provenance `json:"provenance"`
		Supersedes   []string    `json:"supersedes"`
		SupersededBy *string     `json:"superseded_by"`
		// Search results only.
		Relevance  float64 `json:"relevance"`
		Similarity float64 `json:"similarity"`
		Valence    float64 `json:"valence"`
		Source     string  `json:"source"`
	}
	recentPage struct {
		Items      []recentItem `json:"items"`
		NextCursor *string      `json:"next_cursor"`
	}
	readResult struct {
		Items            []recentItem `json:"items"`
		EpisodicHit      bool         `json:"episodic_hit"`
		QueryConcepts    []string     `json:"query_concepts"`
		ExpandedConcepts []string     `json:"expanded_concepts"`
		SearchTimeMS     float64      `json:"search_time_ms"`
		// With include_timings (the form's "Show timings").
		EmbedMS       *float64 `json:"embed_ms"`
		DiversityMS   *float64 `json:"diversity_ms"`
		NDBRoundtrips *int     `json:"n_db_roundtrips"`
	}
	atom struct {
		AtomID         string          `json:"atom_id"`
		Content        string          `json:"content"`
		Concepts       []string        `json:"concepts"`
		Domain         string          `json:"domain"`
		Metadata       json.RawMessage `json:"metadata"`
		Fingerprint    *string         `json:"fingerprint"`
		ExternalRef    *string         `json:"external_ref"`
		Importance     float64         `json:"importance"`
		Valence        float64         `json:"valence"`
		AtomType       string          `json:"atom_type"`
		Supersedes     []string        `json:"supersedes"`
		SupersededBy   *string         `json:"superseded_by"`
		CreatedAt      time.Time       `json:"created_at"`
		AccessCount    int64           `json:"access_count"`
		LastAccessedAt *time.Time      `json:"last_accessed_at"`
	}
	chainRevision struct {
		ID           string    `json:"id"`
		Content      string    `json:"content"`
		Domain       string    `json:"domain"`
		CreatedAt    time.Time `json:"created_at"`
		IsHead       bool      `json:"is_head"`
		Supersedes   []string  `json:"supersedes"`
		SupersededBy *string   `json:"superseded_by"`
	}
	chain struct {
		Revisions []chainRevision `json:"revisions"`
		Dangling  []string        `json:"dangling"`
		Truncated bool            `json:"truncated"`
	}
	stats struct {
		TotalAtoms   int64    `json:"total_atoms"`
		Episodes     int64    `json:"episodes"`
		Prototypes   int64    `json:"prototypes"`
		Singletons   int64    `json:"singletons"`
		HebbianEdges int64    `json:"hebbian_edges"`
		Domains      []string `json:"domains"`
		AvgValence   float64  `json:"avg_valence"`
	}
	roomItem struct {
		RoomID    string     `json:"room_id"`
		Address   string     `json:"address"`
		Name      string     `json:"name"`
		Role      string     `json:"role"`
		Scope     string     `json:"scope"`
		Status    string     `json:"status"`
		ExpiresAt *time.Time `json:"expires_at"`
	}
	member struct {
		OrgID     string     `json:"org_id"`
		Scope     string     `json:"scope"`
		Status    string     `json:"status"`
		ExpiresAt *time.Time `json:"expires_at"`
		JoinedAt  time.Time  `json:"joined_at"`
		// Filled by the console.
		OrgName string
		Owner   bool
	}
	secret struct {
		AtomID    string    `json:"atom_id"`
		Alias     string    `json:"alias"`
		Context   string    `json:"context"`
		CreatedAt time.Time `json:"created_at"`
	}
)
