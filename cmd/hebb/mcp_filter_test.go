package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runFilteredTo runs an SDK server with one slow tool over the stdio
// filter on input, writing to out, until the server ends.
func runFilteredTo(t *testing.T, input string, out *syncBuffer) {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type args struct{}
	mcp.AddTool(server, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ args) (*mcp.CallToolResult, any, error) {
		time.Sleep(300 * time.Millisecond)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	in, w := newStdioFilter(strings.NewReader(input), out).transport()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := server.Run(ctx, &mcp.IOTransport{Reader: in, Writer: w, MaxLineLength: -1}); err != nil && ctx.Err() != nil {
		t.Fatalf("the server did not end: %v", err)
	}
}

// runFiltered runs runFilteredTo and returns the answers it wrote, by id
// (batches' answers included) and those with id null.
func runFiltered(t *testing.T, input string) (byID map[string]map[string]any, nulls []map[string]any) {
	t.Helper()
	var out syncBuffer
	runFilteredTo(t, input, &out)
	byID = map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msgs []map[string]any
		if strings.HasPrefix(l, "[") { // a batch's answers
			if err := json.Unmarshal([]byte(l), &msgs); err != nil {
				t.Fatalf("not a JSON array line: %q", l)
			}
		} else {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("not a JSON line: %q", l)
			}
			msgs = append(msgs, m)
		}
		for _, m := range msgs {
			if m["id"] == nil {
				nulls = append(nulls, m)
				continue
			}
			id, _ := json.Marshal(m["id"])
			if _, dup := byID[string(id)]; dup {
				t.Errorf("two answers to id %s", id)
			}
			byID[string(id)] = m
		}
	}
	return byID, nulls
}

const filterInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// Bad lines are answered and the session goes on; requests read before
// stdin closed are all answered.
func TestStdioFilter(t *testing.T) {
	input := filterInit + "{not json\n" + "\xff\xfe\n" + `{"jsonrpc":"1.0","id":5,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n" + "[]\n" + `[{"jsonrpc":"2.0","id":9,"method":"ping"}]` + "\n" +
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":7}` + "\n\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":"x","method":"ping"}` // no final newline, then EOF
	got, nulls := runFiltered(t, input)
	if got["1"]["result"] == nil {
		t.Errorf("initialize not answered: %v", got["1"])
	}
	if got["2"]["result"] == nil {
		t.Errorf("the tool call read before EOF was not answered: %v", got)
	}
	if got[`"x"`]["result"] == nil {
		t.Errorf("the last line (no newline) was not answered: %v", got)
	}
	if errCode(got["5"]) != -32600 || errCode(got["7"]) != -32600 {
		t.Errorf("bad version or no method: %v %v", got["5"], got["7"])
	}
	var parse, invalid int
	for _, m := range nulls {
		switch errCode(m) {
		case -32700:
			parse++
		case -32600:
			invalid++
		}
	}
	if parse != 2 || invalid != 3 { // {not json, \xff; id object, [], 1.5
		t.Errorf("%d parse errors and %d invalid requests with id null, want 2 and 3: %v", parse, invalid, got)
	}
	if got["9"]["result"] == nil {
		t.Errorf("the batch's ping was not answered: %v", got["9"])
	}
}

// A batch (protocol 2025-03-26 requires them; the SDK's stdio transport
// refused them) is answered with one array holding every request's answer;
// a batch of notifications with nothing.
func TestStdioFilterBatch(t *testing.T) {
	input := filterInit +
		`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},` +
		`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"slow","arguments":{}}},` +
		`{"jsonrpc":"2.0","id":"c","method":"nope"}]` + "\n" +
		`[{"jsonrpc":"2.0","method":"notifications/y"}]` + "\n" +
		`{"jsonrpc":"2.0","id":"d","method":"ping"}` + "\n"
	var out syncBuffer
	runFilteredTo(t, input, &out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var arrays []string
	for _, l := range lines {
		if strings.HasPrefix(l, "[") {
			arrays = append(arrays, l)
		}
	}
	if len(arrays) != 1 || len(lines) != 3 { // initialize, the batch, d
		t.Fatalf("output lines %q, want the initialize answer, one array and d's answer", lines)
	}
	var batch []map[string]any
	if err := json.Unmarshal([]byte(arrays[0]), &batch); err != nil || len(batch) != 3 {
		t.Fatalf("batch answer %s (%v), want 3 answers", arrays[0], err)
	}
	ids := map[any]map[string]any{}
	for _, m := range batch {
		ids[m["id"]] = m
	}
	if ids["a"]["result"] == nil || ids["b"]["result"] == nil || errCode(ids["c"]) != -32601 {
		t.Errorf("batch answers %v", batch)
	}
}

func TestStdioFilterLongLine(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"` + strings.Repeat("a", maxMCPLine) + `"}}` + "\n"
	got, nulls := runFiltered(t, filterInit+long+`{"jsonrpc":"2.0","id":4,"method":"ping"}`+"\n")
	if got["4"]["result"] == nil || got["3"] != nil || len(nulls) != 1 || errCode(nulls[0]) != -32600 {
		t.Errorf("after a line over the limit: %v %v", got, nulls)
	}
}

// A request reusing the id of one in progress is answered (the SDK dropped
// it, and the filter then waited its whole drain time at EOF); errors the
// SDK words itself (code 0, its Go types) reach the client as standard
// JSON-RPC errors.
func TestStdioFilterDuplicateIDAndSDKErrors(t *testing.T) {
	input := filterInit +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}` + "\n" +
		`{"jsonrpc":"2.0","id":4,"method":"ping","params":[]}` + "\n"
	start := time.Now()
	got, nulls := runFiltered(t, input)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the server took %v to end after EOF", took)
	}
	if got["2"]["result"] == nil {
		t.Errorf("the first request with id 2 was not answered: %v", got["2"])
	}
	if len(nulls) != 1 || errCode(nulls[0]) != -32600 {
		t.Errorf("the second request with id 2: %v, want one -32600 with id null", nulls)
	}
	for _, id := range []string{"3", "4"} {
		b, _ := json.Marshal(got[id])
		if c := errCode(got[id]); c != -32602 || strings.Contains(string(b), "mcp.") || strings.Contains(string(b), "unmarshal") {
			t.Errorf("id %s: %s, want -32602 without the SDK's text", id, b)
		}
	}

	got, _ = runFiltered(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n")
	if c := errCode(got["1"]); c != -32600 {
		t.Errorf("tools/list before initialize: %v, want -32600", got["1"])
	}
}

func TestRestBase(t *testing.T) {
	for in, want := range map[string]string{
		"":                       defaultRESTBase,
		"http://h:8080":          "http://h:8080/api/v1",
		"http://h:8080/":         "http://h:8080/api/v1",
		"https://h/api/v1/":      "https://h/api/v1",
		"https://h/proxy/api/v1": "https://h/proxy/api/v1",
	} {
		if got := restBase(in); got != want {
			t.Errorf("restBase(%q) = %q, want %q", in, got, want)
		}
	}
}
