package router_test

import (
	"math"
	"strings"
	"testing"
)

func TestFeedbackHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	t.Run("feedback", func(t *testing.T) { testFeedback(t, ts) })
	t.Run("retrieval stages", func(t *testing.T) { testRetrievalStages(t, ts) })
}

func testFeedback(t *testing.T, ts *testServer) {
	_, key := ts.newOrg("feedback")
	target := memWrite(t, ts, key, "Feedback target about the release freeze", map[string]any{"concepts": []string{"release", "freeze"}})
	feedback := func(k string, body any) resp { return ts.do("POST", "/memory/feedback", k, body) }

	t.Run("validation", func(t *testing.T) {
		cases := []struct {
			name string
			body any
			loc  string
		}{
			{"missing outcome", map[string]any{"atom_ids": []string{target}}, "body.outcome"},
			{"outcome 1.5", map[string]any{"atom_ids": []string{target}, "outcome": 1.5}, "body.outcome"},
			{"outcome -1.01", map[string]any{"atom_ids": []string{target}, "outcome": -1.01}, "body.outcome"},
			{"outcome not a number", map[string]any{"atom_ids": []string{target}, "outcome": "good"}, "body.outcome"},
			{"missing atom_ids", map[string]any{"outcome": 1}, "body.atom_ids"},
			{"empty atom_ids", map[string]any{"atom_ids": []string{}, "outcome": 1}, "body.atom_ids"},
			{"malformed UUID", map[string]any{"atom_ids": []string{target, "not-a-uuid"}, "outcome": 1}, "body.atom_ids.1"},
			{"unknown field", map[string]any{"atom_ids": []string{target}, "outcome": 1, "weight": 2}, "body.weight"},
			{"a query concept of 201 characters", map[string]any{"atom_ids": []string{target}, "outcome": 1,
				"query_concepts": []string{"ok", strings.Repeat("q", 201)}}, "body.query_concepts.1"},
			{"empty body", "", "body"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := feedback(key, tc.body)
				checkValidation(t, r)
				memHasLoc(t, r, tc.loc)
			})
		}
		if v := num(memAtom(t, ts, key, target)["valence"]); v != 0 {
			t.Errorf("refused feedback moved valence to %v", v)
		}
	})

	t.Run("valence follows Rescorla-Wagner", func(t *testing.T) {
		id := memWrite(t, ts, key, "Valence subject: the staging database password rotates monthly", nil)
		v := 0.0
		for _, outcome := range []float64{1, 1, -0.5, 0, -1, 0.25} {
			r := feedback(key, map[string]any{"atom_ids": []string{id}, "outcome": outcome})
			mustStatus(t, r, 200)
			v += 0.3 * (outcome - v)
			if r.Body["updated_count"] != 1.0 {
				t.Errorf("updated_count %v, want 1", r.Body["updated_count"])
			}
			if avg := num(r.Body["avg_valence"]); avg != 0 && math.Abs(avg-v) > 1e-9 {
				t.Errorf("avg_valence %v, want %v (or 0)", avg, v)
			}
			if got := num(memAtom(t, ts, key, id)["valence"]); math.Abs(got-v) > 1e-9 {
				t.Fatalf("after outcome %v: valence %v, want %v", outcome, got, v)
			}
		}
	})

	t.Run("a repeated ID is one atom", func(t *testing.T) {
		id := memWrite(t, ts, key, "Repeated feedback subject: the canary deploy waits ten minutes", nil)
		r := feedback(key, map[string]any{"atom_ids": []string{id, strings.ToUpper(id), id}, "outcome": 1})
		mustStatus(t, r, 200)
		if r.Body["updated_count"] != 1.0 {
			t.Errorf("updated_count %v, want 1", r.Body["updated_count"])
		}
		if v := num(memAtom(t, ts, key, id)["valence"]); math.Abs(v-0.3) > 1e-9 {
			t.Errorf("valence %v, want one step (0.3)", v)
		}
	})

	t.Run("unknown and foreign atoms are not updated", func(t *testing.T) {
		_, other := ts.newOrg("feedback-other")
		foreign := memWrite(t, ts, other, "Belongs to another account", nil)
		r := feedback(key, map[string]any{"atom_ids": []string{foreign, "0190a000-0000-7000-8000-000000000001"}, "outcome": 1})
		mustStatus(t, r, 200)
		if r.Body["updated_count"] != 0.0 {
			t.Errorf("updated_count %v, want 0", r.Body["updated_count"])
		}
		if v := num(memAtom(t, ts, other, foreign)["valence"]); v != 0 {
			t.Errorf("foreign atom valence moved to %v", v)
		}
	})

	t.Run("response shape and co-activation", func(t *testing.T) {
		r := feedback(key, map[string]any{"atom_ids": []string{target}, "outcome": 0.5})
		mustStatus(t, r, 200)
		if got := keys(r.Body); len(got) != 4 {
			t.Errorf("feedback keys %v", got)
		}
		for _, k := range []string{"updated_count", "avg_valence", "coactivation_edges", "feedback_time_ms"} {
			if _, ok := r.Body[k].(float64); !ok {
				t.Errorf("%s is not a number: %s", k, r.Raw)
			}
		}
		if r.Body["coactivation_edges"] != 0.0 {
			t.Errorf("coactivation_edges %v without query_concepts", r.Body["coactivation_edges"])
		}
		r = feedback(key, map[string]any{"atom_ids": []string{target}, "outcome": 1, "query_concepts": []string{"launch", "calendar"}})
		mustStatus(t, r, 200)
		if num(r.Body["coactivation_edges"]) != 4 { // {release, freeze} × {launch, calendar}
			t.Errorf("coactivation_edges %v, want 4", r.Body["coactivation_edges"])
		}
		r = feedback(key, map[string]any{"atom_ids": []string{target}, "outcome": -1, "concepts": []string{"Risk"}, "query_concepts": []string{"launch"}})
		mustStatus(t, r, 200)
		if num(r.Body["coactivation_edges"]) != 3 { // {release, freeze, risk} × {launch}
			t.Errorf("coactivation_edges %v, want 3", r.Body["coactivation_edges"])
		}
		g := ts.do("POST", "/memory/graph", key, map[string]any{"seeds": []string{"launch"}})
		checkGraph(t, g)
		if got := memEdges(g); len(got) != 3 {
			t.Errorf("launch edges %v, want freeze, release and risk", got)
		}
	})

	t.Run("positive feedback changes the ranking", func(t *testing.T) {
		_, k := ts.newOrg("ranking")
		const content = "Rotate the on-call pager every Monday morning"
		// One text in two domains: the gate compares within a domain only,
		// and the two atoms score identically for any query.
		a := memWrite(t, ts, k, content, map[string]any{"domain": "team-a"})
		b := memWrite(t, ts, k, content, map[string]any{"domain": "team-b"})
		q := map[string]any{"query": "who rotates the pager on Monday", "include_associations": false, "min_relevance": 0}
		r := ts.do("POST", "/memory/read", k, q)
		mustStatus(t, r, 200)
		its := items(r)
		if len(its) != 2 {
			t.Fatalf("want both atoms: %s", r.Raw)
		}
		if its[0]["similarity"] != its[1]["similarity"] || its[0]["relevance"] != its[1]["relevance"] {
			t.Fatalf("atoms do not score equally: %v / %v", its[0], its[1])
		}
		loser := str(its[1]["atom_id"])
		if loser != a && loser != b {
			t.Fatalf("unexpected item %v", its[1])
		}
		mustStatus(t, feedback(k, map[string]any{"atom_ids": []string{loser}, "outcome": 1}), 200)
		r = ts.do("POST", "/memory/read", k, q)
		mustStatus(t, r, 200)
		its = items(r)
		if len(its) != 2 || its[0]["atom_id"] != loser {
			t.Fatalf("positively rated atom not first: %s", r.Raw)
		}
		if its[0]["similarity"] != its[1]["similarity"] || num(its[0]["relevance"]) <= num(its[1]["relevance"]) {
			t.Errorf("relevance not raised by valence: %v / %v", its[0], its[1])
		}
		if want := num(its[1]["relevance"]) * (1 + 0.25*0.3); math.Abs(num(its[0]["relevance"])-want) > 1e-6 {
			t.Errorf("relevance %v, want %v (score·(1+α·v), v=0.3)", its[0]["relevance"], want)
		}
		// Negative feedback on the same atom sends it below the other.
		for i := 0; i < 2; i++ {
			mustStatus(t, feedback(k, map[string]any{"atom_ids": []string{loser}, "outcome": -1}), 200)
		}
		r = ts.do("POST", "/memory/read", k, q)
		if its = items(r); len(its) != 2 || its[1]["atom_id"] != loser {
			t.Errorf("negatively rated atom not last: %s", r.Raw)
		}
	})
}

func testRetrievalStages(t *testing.T, ts *testServer) {

	t.Run("concept_scoped surfaces a semantically weak atom", func(t *testing.T) {
		_, k := ts.newOrg("concepts")
		id := memWrite(t, ts, k, "The espresso machine needs descaling every month", map[string]any{"concepts": []string{"maintenance"}})
		memWrite(t, ts, k, "Quarterly planning happens in the big meeting room", nil)
		q := map[string]any{"query": "quarterly planning review", "include_associations": false}
		r := ts.do("POST", "/memory/read", k, q)
		mustStatus(t, r, 200)
		if memFind(r, id) != nil {
			t.Fatalf("unrelated atom returned without a hint: %s", r.Raw)
		}
		q["concepts"] = []string{"Maintenance"}
		r = ts.do("POST", "/memory/read", k, q)
		mustStatus(t, r, 200)
		it := memFind(r, id)
		if it == nil {
			t.Fatalf("atom carrying the hinted concept not returned: %s", r.Raw)
		}
		if it["source"] != "concept_scoped" {
			t.Errorf("source %v, want concept_scoped", it["source"])
		}
		if num(it["similarity"]) >= 0.3 || num(it["relevance"]) < 0.3 {
			t.Errorf("similarity %v relevance %v: want a weak similarity lifted above min_relevance", it["similarity"], it["relevance"])
		}
		if !contains(toStrings(r.Body["query_concepts"]), "maintenance") {
			t.Errorf("query_concepts %v lack the hint", r.Body["query_concepts"])
		}
	})

	t.Run("feedback makes an association that retrieves", func(t *testing.T) {
		// An association scores similarity × edge weight (DESIGN.md §4):
		// the atom is somewhat like the query, less than the filler that
		// takes the one ranked place.
		_, k := ts.newOrg("hebbian")
		memWrite(t, ts, k, "The team offsite agenda for the spring planning days", nil)
		id := memWrite(t, ts, k, "Offsite venue invoices are archived on the finance drive", map[string]any{"concepts": []string{"ledger"}})
		q := map[string]any{"query": "team offsite agenda", "top_k": 1, "min_relevance": 0.1}
		r := ts.do("POST", "/memory/read", k, q)
		mustStatus(t, r, 200)
		if memFind(r, id) != nil || contains(toStrings(r.Body["expanded_concepts"]), "ledger") {
			t.Fatalf("association before any feedback: %s", r.Raw)
		}
		qc := r.Body["query_concepts"]
		if len(list(qc)) == 0 {
			t.Fatalf("no query_concepts: %s", r.Raw)
		}
		for round := 1; round <= 10; round++ {
			fb := ts.do("POST", "/memory/feedback", k, map[string]any{"atom_ids": []string{id}, "outcome": 1, "query_concepts": qc})
			mustStatus(t, fb, 200)
			if num(fb.Body["coactivation_edges"]) != float64(len(list(qc))) {
				t.Errorf("coactivation_edges %v, want %d", fb.Body["coactivation_edges"], len(list(qc)))
			}
			r = ts.do("POST", "/memory/read", k, q)
			mustStatus(t, r, 200)
			if !contains(toStrings(r.Body["expanded_concepts"]), "ledger") {
				t.Fatalf("round %d: expanded_concepts %v lack ledger", round, r.Body["expanded_concepts"])
			}
			if it := memFind(r, id); it != nil {
				if it["source"] != "hebbian_retrieval" {
					t.Errorf("source %v, want hebbian_retrieval", it["source"])
				}
				t.Logf("retrieved through the association after %d feedback rounds", round)
				// Without associations the atom is gone again.
				q["include_associations"] = false
				if r := ts.do("POST", "/memory/read", k, q); memFind(r, id) != nil {
					t.Errorf("returned with include_associations false: %s", r.Raw)
				}
				return
			}
		}
		t.Fatalf("atom never retrieved through the association: %s", r.Raw)
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range list(v) {
		out = append(out, str(x))
	}
	return out
}
