package mcptools

import (
	"fmt"
)

// Scopes of the remote connector that the tools need.
const (
	ScopeRead  = "memory:read"
	ScopeWrite = "memory:write"
)

// Bounds of interface §8 stated in the input schemas.
const (
	maxContent     = 10000
	maxConcepts    = 256
	maxFingerprint = 512
	maxDomain      = 100
	maxExternalRef = 255
	maxSupersedes  = 32
	maxQuery       = 5000
	maxTopK        = 500
	maxSeeds       = 20
	maxSeedLen     = 200
	maxGraphLimit  = 500
	maxRecent      = 100
	maxInviteUses  = 1000
	maxInviteDays  = 365
	maxRoomName    = 200
)

// tool is one tool: which REST call it makes and how its result reads.
type tool struct {
	name, title, desc string
	scope             string
	method, path      string // path relative to /api/v1; "{room_id}" is filled from the argument
	input             schema
	summary           func(res map[string]any) string
}

const domainDesc = "Namespace of the memory, up to 100 characters (default general). " +
	"A room address xroom:<room_id> addresses a shared room."

// toolSet returns the tools; remote adds max_uses to the invite tool.
func toolSet(remote bool) []tool {
	return []tool{
		writeTool(), readTool(),
		{name: "memory_stats", title: "Memory statistics", scope: ScopeRead, method: "GET", path: "/memory/stats",
			desc:  "Counts of your own account's memories, associations and domains.",
			input: object(false, nil, map[string]schema{}), summary: statsSummary},
		feedbackTool(), graphTool(), recentTool(),
		{name: "memory_create_room", title: "Create a shared room", scope: ScopeWrite, method: "POST", path: "/memory/rooms",
			desc: "Create a shared memory room owned by you. Write and read it with domain xroom:<room_id>.",
			input: object(true, []string{"name"}, map[string]schema{
				"name": str("Name of the room.", 1, maxRoomName)}),
			summary: func(r map[string]any) string {
				return fmt.Sprintf("Created room %v at %v.", r["room_id"], r["address"])
			}},
		inviteTool(remote),
		{name: "memory_join_room", title: "Join a shared room", scope: ScopeWrite, method: "POST", path: "/memory/rooms/join",
			desc: "Redeem a share code (mshare_...) and join its room.",
			input: object(true, []string{"code"}, map[string]schema{
				"code": str("The share code.", 1, 0)}),
			summary: func(r map[string]any) string {
				return fmt.Sprintf("Joined %v with %v access.", r["address"], r["scope"])
			}},
		{name: "memory_list_rooms", title: "List shared rooms", scope: ScopeRead, method: "GET", path: "/memory/rooms",
			desc:  "Rooms you own or joined, with their xroom: addresses.",
			input: object(false, nil, map[string]schema{}), summary: countSummary("rooms", "room")},
		{name: "vault_list", title: "List vault secrets", scope: ScopeRead, method: "GET", path: "/vault/secrets",
			desc:  "Aliases and context of the secrets in your vault. Values are never returned.",
			input: object(false, nil, map[string]schema{}), summary: countSummary("secrets", "secret")},
	}
}

func writeTool() tool {
	return tool{name: "memory_write", title: "Store a memory", scope: ScopeWrite, method: "POST", path: "/memory/write",
		desc: "Store a memory (a preference, decision, lesson or fact). A write the service cannot tell apart " +
			"from a stored memory is refused (stored false).",
		input: object(true, []string{"content"}, map[string]schema{
			"content":      str("The memory, 1 to 10,000 characters.", 1, maxContent),
			"concepts":     strList("Key concepts (extracted from the content when omitted).", 0, maxConcepts, 0),
			"domain":       str(domainDesc, 0, maxDomain),
			"metadata":     metadata(),
			"fingerprint":  str("Exact-match fingerprint for later episodic recall.", 0, maxFingerprint),
			"external_ref": str("Your unique reference, for idempotent writes; must not start with secret:.", 1, maxExternalRef),
			"supersedes":   uuids("IDs of memories this one replaces (not in rooms).", 0, maxSupersedes),
		}),
		summary: writeSummary}
}

func readTool() tool {
	return tool{name: "memory_read", title: "Search memories", scope: ScopeRead, method: "POST", path: "/memory/read",
		desc: "Search memories with a natural-language query; results combine semantic similarity with " +
			"learned concept associations, best first.",
		input: object(false, []string{"query"}, map[string]schema{
			"query":                str("What to look for, 1 to 5,000 characters.", 1, maxQuery),
			"top_k":                integer("How many results to aim for.", 1, maxTopK, 10),
			"domain":               nullableStr(domainDesc+" Omitted or null: all your private domains.", maxDomain),
			"min_relevance":        number("Relevance floor.", 0, 1, 0.3),
			"include_associations": boolean("Expand through learned concept associations.", true),
			"include_history":      boolean("Include replaced revisions.", false),
			"diversity":            number("0 ranks by relevance only; higher values favour varied results.", 0, 1, 0),
			"concepts":             strList("Concept hints.", 0, maxConcepts, 0),
			"fingerprint":          str("Exact episodic match on a fingerprint given at write time.", 0, maxFingerprint),
			"author_principal":     str("Room filter: the authoring account (org_id).", 0, 0),
			"author_agent":         str("Room filter: the authoring agent.", 0, 0),
			"author_client_env":    str("Room filter: the authoring client environment.", 0, 0),
			"author_is_external":   schema{"type": "boolean", "description": "Room filter: only memories of members other than the owner."},
		}),
		summary: readSummary}
}

func feedbackTool() tool {
	return tool{name: "memory_feedback", title: "Report an outcome", scope: ScopeWrite, method: "POST", path: "/memory/feedback",
		desc: "Report how helpful retrieved memories were (-1 harmful to +1 very helpful); it changes later ranking.",
		input: object(true, []string{"atom_ids", "outcome"}, map[string]schema{
			"atom_ids":       uuids("IDs of the memories the outcome is about.", 1, 0),
			"outcome":        number("-1.0 (failure) to +1.0 (success); 0 is neutral.", -1, 1, nil),
			"concepts":       strList("Concepts to reinforce.", 0, maxConcepts, 0),
			"query_concepts": strList("Concepts of the query (enables association learning).", 0, maxConcepts, 0),
			"domain":         str(domainDesc, 0, maxDomain),
		}),
		summary: func(r map[string]any) string { return fmt.Sprintf("Updated %v memories.", r["updated_count"]) }}
}

func graphTool() tool {
	return tool{name: "memory_graph", title: "Read concept associations", scope: ScopeRead, method: "POST", path: "/memory/graph",
		desc: "Read the learned concept-association graph around seed concepts.",
		input: object(false, []string{"seeds"}, map[string]schema{
			"seeds":      strList("Seed concepts.", 1, maxSeeds, maxSeedLen),
			"depth":      integer("Hops from the seeds.", 1, 3, 1),
			"domain":     str("A room address xroom:<room_id> reads the room's graph.", 0, maxDomain),
			"min_weight": schema{"type": []string{"number", "null"}, "minimum": 0, "description": "Weight floor."},
			"limit":      integer("Most edges to return.", 1, maxGraphLimit, 100),
		}),
		summary: func(r map[string]any) string {
			return fmt.Sprintf("%d edges, %d concepts.", length(r["edges"]), length(r["nodes"]))
		}}
}

func recentTool() tool {
	return tool{name: "memory_list_recent", title: "List recent memories", scope: ScopeRead, method: "POST", path: "/memory/recent",
		desc: "The newest memories first, without a query; page with next_cursor.",
		input: object(false, nil, map[string]schema{
			"domain":          nullableStr(domainDesc+" Omitted or null: all your private domains.", maxDomain),
			"since":           str("ISO-8601 instant, inclusive.", 0, 0),
			"until":           str("ISO-8601 instant, inclusive.", 0, 0),
			"exclude_author":  str("Drop entries by this author principal.", 0, 0),
			"include_history": boolean("Include replaced revisions.", false),
			"limit":           integer("Page size.", 1, maxRecent, 20),
			"cursor":          str("next_cursor of the previous page.", 0, 0),
		}),
		summary: countSummary("items", "memory")}
}

func inviteTool(remote bool) tool {
	props := map[string]schema{
		"room_id":         str("The room (room_<ulid>), owned by you.", 1, 0),
		"scope":           enum("Access the code grants.", "read_write", "read", "read_write"),
		"expires_in_days": integer("Days until the code expires.", 1, maxInviteDays, 7),
	}
	desc := "Mint a single-use share code for a room you own; returns the code and a message to share."
	if remote {
		props["max_uses"] = integer("How many times the code can be redeemed.", 1, maxInviteUses, 1)
		desc = "Mint a share code for a room you own (single-use unless max_uses is given); " +
			"returns the code and a message to share."
	}
	return tool{name: "memory_invite_to_room", title: "Invite to a shared room", scope: ScopeWrite, method: "POST",
		path: "/memory/rooms/{room_id}/invites", desc: desc, input: object(true, []string{"room_id"}, props),
		summary: inviteSummary}
}

// inviteSummary says how often the code can be used: the local tool drops
// a max_uses it is given, and a model that asked for five must not think
// it got them.
func inviteSummary(r map[string]any) string {
	uses := "single-use"
	if n := num(r["max_uses"]); n > 1 {
		uses = fmt.Sprintf("usable %d times", int(n))
	}
	return fmt.Sprintf("Share code %v (%s): %v", r["code"], uses, r["share_message"])
}

func writeSummary(r map[string]any) string {
	if r["stored"] == true {
		return fmt.Sprintf("Stored memory %v (importance %.2f).", r["atom_id"], num(r["importance"]))
	}
	return fmt.Sprintf("Not stored: %v", r["reason"])
}

func readSummary(r map[string]any) string {
	n := length(r["items"])
	if n == 1 {
		return "1 memory found."
	}
	return fmt.Sprintf("%d memories found.", n)
}

func statsSummary(r map[string]any) string {
	atoms, _ := r["total_atoms"].(float64)
	return counted(int(atoms), "memory") + " in " + counted(length(r["domains"]), "domain") + "."
}

func countSummary(field, noun string) func(map[string]any) string {
	return func(r map[string]any) string { return counted(length(r[field]), noun) + "." }
}

// counted is "1 noun" or "n nouns".
func counted(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case noun == "memory":
		return fmt.Sprintf("%d memories", n)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func length(v any) int {
	l, _ := v.([]any)
	return len(l)
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}
