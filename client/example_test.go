package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/hebbdb/hebb/client"
)

// Store a memory and search it back with other words.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(baseURL, exampleKey("quickstart")) // e.g. http://127.0.0.1:8080/api/v1, os.Getenv("HEBB_API_KEY")
	if err != nil {
		log.Fatal(err)
	}
	w, err := c.Write(ctx, client.WriteRequest{
		Content:  "The user prefers a dark theme in every editor",
		Domain:   "prefs",
		Metadata: map[string]any{"source": "chat"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored:", w.Stored)

	res, err := c.Read(ctx, client.ReadRequest{Query: "which theme does the user prefer in the editor?", Domain: "prefs"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Items[0].Content, res.Items[0].AtomID == w.ID())
	// Output:
	// stored: true
	// The user prefers a dark theme in every editor true
}

func ExampleClient_Write() {
	ctx := context.Background()
	c, _ := client.New(baseURL, exampleKey("write"))
	first, err := c.Write(ctx, client.WriteRequest{Content: "Deploys happen on Tuesdays", ExternalRef: "ops-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.Stored, first.Importance)

	// The same external_ref again stores nothing and names the existing atom.
	again, err := c.Write(ctx, client.WriteRequest{Content: "Deploys happen on Tuesdays", ExternalRef: "ops-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(again.Stored, again.Reason, again.ID() == first.ID())
	// Output:
	// true 1
	// false external_ref exists true
}

func ExampleClient_WriteBatch() {
	ctx := context.Background()
	c, _ := client.New(baseURL, exampleKey("batch"))
	res, err := c.WriteBatch(ctx, client.BatchWriteRequest{Items: []client.WriteRequest{
		{Content: "The staging database is Postgres 16", Domain: "infra"},
		{Content: "The CI runs on two self-hosted runners", Domain: "infra"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	// An Idempotency-Key was generated and reused by any retry; sending it
	// again replays the first answer instead of writing twice.
	replay, err := c.WriteBatch(ctx, client.BatchWriteRequest{IdempotencyKey: res.IdempotencyKey, Items: []client.WriteRequest{
		{Content: "The staging database is Postgres 16", Domain: "infra"},
		{Content: "The CI runs on two self-hosted runners", Domain: "infra"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	stats, _ := c.Stats(ctx)
	fmt.Println(res.TotalCount, res.StoredCount, *replay.Results[1].AtomID == *res.Results[1].AtomID, stats.TotalAtoms)
	// Output:
	// 2 2 true 2
}

func ExampleClient_Recent() {
	ctx := context.Background()
	c, _ := client.New(baseURL, exampleKey("recent"))
	for _, s := range []string{"first note", "second note", "third note", "fourth note", "fifth note"} {
		if _, err := c.Write(ctx, client.WriteRequest{Content: s, Domain: "notes"}); err != nil {
			log.Fatal(err)
		}
	}
	req := client.RecentRequest{Domain: "notes", Limit: 2}
	for page := 1; ; page++ {
		res, err := c.Recent(ctx, req)
		if err != nil {
			log.Fatal(err)
		}
		var contents []string
		for _, it := range res.Items {
			contents = append(contents, it.Content)
		}
		fmt.Printf("page %d: %s\n", page, strings.Join(contents, ", "))
		if res.NextCursor == nil {
			break
		}
		req.Cursor = *res.NextCursor
	}
	// Output:
	// page 1: fifth note, fourth note
	// page 2: third note, second note
	// page 3: first note
}

func ExampleClient_RecentAll() {
	ctx := context.Background()
	c, _ := client.New(baseURL, exampleKey("recent-all"))
	for _, s := range []string{"alpha", "beta", "gamma"} {
		if _, err := c.Write(ctx, client.WriteRequest{Content: s}); err != nil {
			log.Fatal(err)
		}
	}
	for it, err := range c.RecentAll(ctx, client.RecentRequest{Limit: 1}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(it.Content)
	}
	// Output:
	// gamma
	// beta
	// alpha
}

// Replace a fact: the old revision stays fetchable and the chain links them.
func ExampleClient_Chain() {
	ctx := context.Background()
	c, _ := client.New(baseURL, exampleKey("chain"))
	old, err := c.Write(ctx, client.WriteRequest{Content: "The user prefers a dark theme", Domain: "prefs"})
	if err != nil {
		log.Fatal(err)
	}
	cur, err := c.Write(ctx, client.WriteRequest{Content: "The user now prefers a light theme", Domain: "prefs",
		Supersedes: []string{old.ID()}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("superseded:", cur.Superseded[0] == old.ID())

	// Superseding the old revision again is a conflict naming its successor.
	_, err = c.Write(ctx, client.WriteRequest{Content: "The user likes solarized", Supersedes: []string{old.ID()}})
	fmt.Println("again:", errors.Is(err, client.ErrConflict))

	chain, err := c.Chain(ctx, old.ID())
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range chain.Revisions {
		fmt.Printf("%s (head %v)\n", r.Content, r.IsHead)
	}
	fmt.Println("head:", chain.Head().ID == cur.ID())
	a, _ := c.Atom(ctx, old.ID())
	fmt.Println("old superseded by new:", *a.SupersededBy == cur.ID())
	// Output:
	// superseded: true
	// again: true
	// The user prefers a dark theme (head false)
	// The user now prefers a light theme (head true)
	// head: true
	// old superseded by new: true
}

// Share memories across two accounts through a room.
func ExampleClient_CreateRoom() {
	ctx := context.Background()
	owner, _ := client.New(baseURL, exampleKey("room-owner"))
	guest, _ := client.New(baseURL, exampleKey("room-guest"), client.WithAgent("guest-bot", "ci"))

	room, err := owner.CreateRoom(ctx, "release planning")
	if err != nil {
		log.Fatal(err)
	}
	inv, err := owner.CreateInvite(ctx, room.RoomID, client.InviteRequest{Scope: client.ScopeReadWrite})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.HasPrefix(inv.Code, "mshare_"), inv.MaxUses)

	joined, err := guest.JoinRoom(ctx, inv.Code)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(joined.Address == client.RoomAddress(room.RoomID), joined.Scope)

	// The guest writes into the room; the owner reads it back.
	if _, err := guest.Write(ctx, client.WriteRequest{Content: "Release 2.0 ships on March 3", Domain: joined.Address}); err != nil {
		log.Fatal(err)
	}
	res, err := owner.Read(ctx, client.ReadRequest{Query: "when does release 2.0 ship?", Domain: room.Address})
	if err != nil {
		log.Fatal(err)
	}
	it := res.Items[0]
	fmt.Println(it.Content, it.Provenance.Agent, it.Provenance.IsExternal)

	members, _ := owner.Members(ctx, room.RoomID)
	rooms, _ := guest.Rooms(ctx)
	fmt.Println(len(members), rooms[0].Name, rooms[0].Role)

	// A used-up code is gone.
	_, err = guest.JoinRoom(ctx, inv.Code)
	fmt.Println(errors.Is(err, client.ErrNotFound))
	// Output:
	// true 1
	// true read_write
	// Release 2.0 ships on March 3 guest-bot true
	// 2 release planning member
	// true
}

func ExampleClient_PutSecret() {
	ctx := context.Background()
	c, _ := client.New(baseURL, exampleKey("vault"))
	s, err := c.PutSecret(ctx, client.SecretRequest{Alias: "github.token", Value: "ghp_example", Context: "CI pushes"})
	if err != nil {
		log.Fatal(err)
	}
	list, err := c.Secrets(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, x := range list {
		fmt.Println(x.Alias, x.Context, x.AtomID == s.AtomID)
	}
	_, err = c.Secret(ctx, "missing")
	fmt.Println(errors.Is(err, client.ErrNotFound))
	// Output:
	// github.token CI pushes true
	// true
}

func ExampleClient_Export() {
	ctx := context.Background()
	c, _ := client.New(baseURL, exampleKey("export"))
	old, _ := c.Write(ctx, client.WriteRequest{Content: "Standup is at 9:30"})
	_, _ = c.Write(ctx, client.WriteRequest{Content: "Standup moved to 10:00", Supersedes: []string{old.ID()}})
	_, _ = c.PutSecret(ctx, client.SecretRequest{Alias: "db", Value: "hunter2", Context: "staging database"})

	// One line at a time: the export is never held in memory.
	err := c.Export(ctx, func(l *client.ExportLine) error {
		fmt.Printf("%s %q replaced=%v\n", l.Atom.AtomType, l.Atom.Content, l.Atom.SupersededBy != nil)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// episode "Standup is at 9:30" replaced=true
	// episode "Standup moved to 10:00" replaced=false
	// secret "staging database" replaced=false
}

// Branch on the error's code and details.reason, never on its message.
func ExampleAPIError() {
	ctx := context.Background()
	c, _ := client.New(baseURL, "mk_live_not_a_real_key_000000000000")
	_, err := c.Stats(ctx)
	var ae *client.APIError
	if errors.As(err, &ae) {
		fmt.Println(ae.StatusCode, ae.Code, ae.Reason, ae.RequestID != "")
	}
	fmt.Println(errors.Is(err, client.ErrUnauthorized))

	c, _ = client.New(baseURL, exampleKey("errors"))
	_, err = c.Write(ctx, client.WriteRequest{Content: "x", ExternalRef: "secret:nope"})
	if ae := client.AsAPIError(err); ae != nil {
		fmt.Println(ae.Code, ae.Errors[0].LocString())
	}
	_, err = c.Consolidate(ctx, "")
	fmt.Println(client.ReasonOf(err), errors.Is(err, client.ErrUnavailable))
	// Output:
	// 401 UNAUTHORIZED invalid_key true
	// true
	// VALIDATION_ERROR body.external_ref
	// consolidation_disabled true
}

func ExampleAdminClient_CreateOrg() {
	ctx := context.Background()
	admin, err := client.NewAdmin(rootURL, adminToken) // e.g. http://127.0.0.1:8080 and --admin-token
	if err != nil {
		log.Fatal(err)
	}
	org, err := admin.CreateOrg(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(org.Name, strings.HasPrefix(org.APIKey, "mk_live_"))

	set, err := admin.UpdateSettings(ctx, org.OrgID, client.SettingsUpdate{HideReplaced: client.Ptr(true)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(set.HideReplaced)

	// The new key works at once; a revoked one gets 401 revoked_key.
	c, _ := client.New(baseURL, org.APIKey)
	st, _ := c.Stats(ctx)
	fmt.Println(st.TotalAtoms)
	if err := admin.RevokeKey(ctx, org.KeyID); err != nil {
		log.Fatal(err)
	}
	_, err = c.Stats(ctx)
	fmt.Println(client.ReasonOf(err))
	// Output:
	// acme true
	// true
	// 0
	// revoked_key
}
