package mcptools

import (
	"encoding/json"
	"testing"
)

func TestRefusal(t *testing.T) {
	cases := []struct {
		msg     string
		batches bool
		code    int
		id      string // the refusal's id, as JSON
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, false, 0, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, false, 0, ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, true, 0, ""},
		{`[]`, true, -32600, "null"},
		{`[1]`, true, -32600, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"id":2}]`, true, -32600, "null"},
		{`{bad`, false, -32700, "null"},
		{"\xff\xfe", false, -32700, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, false, -32600, "null"},
		{`"ping"`, false, -32600, "null"},
		{`{"jsonrpc":"1.0","id":5,"method":"ping"}`, false, -32600, "5"},
		{`{"id":5,"method":"ping"}`, false, -32600, "5"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, false, -32600, "null"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, false, -32600, "null"},
		{`{"jsonrpc":"2.0","id":"x","method":7}`, false, -32600, `"x"`},
		{`{"jsonrpc":"2.0","id":7}`, false, -32600, "7"},
		{`{"jsonrpc":"2.0","method":"x","id":"\u0061"}`, false, 0, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, false, -32600, "null"}, // was dropped unanswered on stdio
		{`{"jsonrpc":"2.0","id": null ,"method":"tools/list"}`, false, -32600, "null"},
	}
	for _, tc := range cases {
		got := Refusal([]byte(tc.msg), tc.batches)
		if tc.code == 0 {
			if got != nil {
				t.Errorf("%s: refused %s", tc.msg, got)
			}
			continue
		}
		var r errorReply
		if err := json.Unmarshal(got, &r); err != nil || r.Version != "2.0" || r.Error.Code != tc.code || string(r.ID) != tc.id {
			t.Errorf("%s: %s, want code %d id %s", tc.msg, got, tc.code, tc.id)
		}
	}
	if id := IDOf([]byte(`{"jsonrpc":"2.0","id":"\u0061","method":"x"}`)); string(id) != `"a"` {
		t.Errorf("IDOf keeps the SDK's encoding: %s", id)
	}
	if id := AnsweredID([]byte(`{"jsonrpc":"2.0","id":3,"result":{}}`)); string(id) != "3" {
		t.Errorf("AnsweredID: %s", id)
	}
}
