package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	hebb "github.com/hebbdb/hebb/client"
)

const roomsUsage = `usage: hebb rooms <command> [flags]
  create <name>                 create a room you own
  list                          rooms you own or joined
  invite <room_id> [--scope read|read_write] [--max-uses N] [--expires-in-days N]
                                mint a share code (owner)
  invites <room_id>             outstanding share codes (owner)
  join <code>                   redeem a share code
  members <room_id>             memberships (owner)
  revoke <room_id> <org_id>     revoke a membership (owner)
  archive <room_id>             archive the room (owner)
`

// roomCall makes the API call of a rooms subcommand.
type roomCall func(ctx context.Context, c *hebb.Client, pos []string) (any, error)

// roomsCommand is one `hebb rooms` subcommand: its arguments, its flags,
// and the call it makes.
type roomsCommand struct {
	args  string
	nargs int
	flags func(fs *flag.FlagSet) roomCall
	text  func(env *cliEnv, v any)
}

var roomsCommands = map[string]roomsCommand{
	"create": {"<name>", 1, noFlags(func(ctx context.Context, c *hebb.Client, pos []string) (any, error) {
		return c.CreateRoom(ctx, pos[0])
	}), printRoom},
	"list": {"", 0, noFlags(func(ctx context.Context, c *hebb.Client, _ []string) (any, error) {
		return c.Rooms(ctx)
	}), printRoomList},
	"invite":  {"<room_id>", 1, inviteFlags, printInvite},
	"invites": {"<room_id>", 1, noFlags(listInvites), printInvites},
	"join": {"<code>", 1, noFlags(func(ctx context.Context, c *hebb.Client, pos []string) (any, error) {
		return c.JoinRoom(ctx, pos[0])
	}), printJoined},
	"members": {"<room_id>", 1, noFlags(func(ctx context.Context, c *hebb.Client, pos []string) (any, error) {
		return c.Members(ctx, roomID(pos[0]))
	}), printMembers},
	"revoke": {"<room_id> <org_id>", 2, noFlags(func(ctx context.Context, c *hebb.Client, pos []string) (any, error) {
		return c.RevokeMember(ctx, roomID(pos[0]), pos[1])
	}), printMember},
	"archive": {"<room_id>", 1, noFlags(func(ctx context.Context, c *hebb.Client, pos []string) (any, error) {
		return c.ArchiveRoom(ctx, roomID(pos[0]))
	}), printRoom},
}

// cmdRooms is `hebb rooms ...`.
func cmdRooms(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(env.stderr, roomsUsage)
		if len(args) == 0 {
			return errors.New("rooms: missing command")
		}
		return nil
	}
	rc, ok := roomsCommands[args[0]]
	if !ok {
		fmt.Fprint(env.stderr, roomsUsage)
		return fmt.Errorf("rooms: unknown command %q", args[0])
	}
	fs := newFlagSet(env, "rooms "+args[0], rc.args)
	var cf commonFlags
	cf.register(fs, env, cmdTimeout)
	call := rc.flags(fs)
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, rc.nargs, rc.nargs); err != nil {
		return err
	}
	c, ctx, cancel, err := cf.connect(ctx, env)
	if err != nil {
		return err
	}
	defer cancel()
	v, err := call(ctx, c, pos)
	if err != nil {
		return err
	}
	if key := roomsLists[args[0]]; cf.json && key != "" {
		return printList(env.stdout, key, v)
	}
	if cf.json {
		return printJSON(env.stdout, v)
	}
	rc.text(env, v)
	return nil
}

// roomsLists names the key of the REST answer of the commands that list.
var roomsLists = map[string]string{"list": "rooms", "invites": "invites", "members": "members"}

func noFlags(f roomCall) func(*flag.FlagSet) roomCall {
	return func(*flag.FlagSet) roomCall { return f }
}

func inviteFlags(fs *flag.FlagSet) roomCall {
	scope := fs.String("scope", hebb.ScopeReadWrite, "read or read_write")
	uses := fs.Int("max-uses", 0, "redemptions, 1 to 1000 (default 1)")
	days := fs.Int("expires-in-days", 0, "lifetime in days (default 7)")
	return func(ctx context.Context, c *hebb.Client, pos []string) (any, error) {
		// A value given must be in range: 0 was left out of the request,
		// and the server's default minted with exit 0.
		if flagGiven(fs, "max-uses") && (*uses < 1 || *uses > 1000) {
			return nil, errors.New("--max-uses must be 1 to 1000")
		}
		if flagGiven(fs, "expires-in-days") && *days < 1 {
			return nil, errors.New("--expires-in-days must be 1 or more")
		}
		return c.CreateInvite(ctx, roomID(pos[0]), hebb.InviteRequest{Scope: *scope, MaxUses: *uses, ExpiresInDays: *days})
	}
}

func listInvites(ctx context.Context, c *hebb.Client, pos []string) (any, error) {
	return c.Invites(ctx, roomID(pos[0]))
}

// roomID accepts a room ID or its address xroom:<room_id>.
func roomID(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "xroom:") }

func printRoom(env *cliEnv, v any) {
	r := v.(*hebb.Room)
	fmt.Fprintf(env.stdout, "room %s %q (%s)\naddress %s\n", r.RoomID, r.Name, r.Status, r.Address)
}

func printRoomList(env *cliEnv, v any) {
	rooms := v.([]hebb.RoomListing)
	if len(rooms) == 0 {
		fmt.Fprintln(env.stdout, "no rooms")
	}
	for _, r := range rooms {
		expires := ""
		if r.ExpiresAt != nil {
			expires = ", expires " + formatTime(*r.ExpiresAt)
		}
		fmt.Fprintf(env.stdout, "%s  %q  %s, %s, %s%s\n", r.Address, r.Name, r.Role, r.Scope, r.Status, expires)
	}
}

func printInvite(env *cliEnv, v any) {
	inv := v.(*hebb.Invite)
	fmt.Fprintf(env.stdout, "code %s\n%s access, %d of %d uses, expires %s\njoin link %s\n",
		inv.Code, inv.Scope, inv.Uses, inv.MaxUses, formatTime(inv.ExpiresAt), inv.JoinURL)
}

func printInvites(env *cliEnv, v any) {
	list := v.([]hebb.Invite)
	if len(list) == 0 {
		fmt.Fprintln(env.stdout, "no outstanding invites")
	}
	for _, inv := range list {
		fmt.Fprintf(env.stdout, "%s  %s  %d/%d uses  expires %s\n", inv.Code, inv.Scope, inv.Uses, inv.MaxUses, formatTime(inv.ExpiresAt))
	}
}

func printJoined(env *cliEnv, v any) {
	j := v.(*hebb.Joined)
	fmt.Fprintf(env.stdout, "joined %s (%s)\nuse --domain %s\n", j.RoomID, j.Scope, j.Address)
}

func printMembers(env *cliEnv, v any) {
	for _, m := range v.([]hebb.Member) {
		printMember(env, &m)
	}
}

func printMember(env *cliEnv, v any) {
	m := v.(*hebb.Member)
	expires := ""
	if m.ExpiresAt != nil {
		expires = ", expires " + formatTime(*m.ExpiresAt)
	}
	fmt.Fprintf(env.stdout, "%s  %s, %s, joined %s%s\n", m.OrgID, m.Scope, m.Status, formatTime(m.JoinedAt), expires)
}
