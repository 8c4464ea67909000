package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The load of the leader-kill test: plain writers, and chain clients that
// supersede and read the heads of a few supersession chains concurrently,
// recording a history for porcupine.

const (
	chainCount        = 3
	clientsPerChain   = 2
	plainWriters      = 3
	statusUnknown     = -1 // the request got no definite answer
	linearizableGuard = 60 * time.Second
)

// linInput is one operation on the register "superseded_by of Target".
// Written is, for a supersede, the ID of the atom the call created, found
// in the export afterwards when the answer was lost ("" when none exists).
type linInput struct {
	Read    bool
	Target  string
	Written string
	Content string
}

// linOutput is the answer: Status 200 (Value: the new atom's ID for a
// supersede, superseded_by or "" for a read), 409 (Value: the successor
// the conflict names), 404, or statusUnknown.
type linOutput struct {
	Status int
	Value  string
}

// supersedeModel is a register per atom: its superseded_by, set once.
var supersedeModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		for _, op := range h {
			t := op.Input.(linInput).Target
			by[t] = append(by[t], op)
		}
		keys := make([]string, 0, len(by))
		for k := range by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(string), input.(linInput), output.(linOutput)
		if in.Read {
			return out.Status == 200 && out.Value == s, s
		}
		switch out.Status {
		case 200:
			return s == "", out.Value
		case http.StatusConflict:
			return s != "" && s == out.Value, s
		case statusUnknown: // only kept when the atom exists: it was applied
			return s == "", in.Written
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		if in.Read {
			return fmt.Sprintf("read(%.8s) -> %d %.8s", in.Target, out.Status, out.Value)
		}
		return fmt.Sprintf("supersede(%.8s) -> %d %.8s", in.Target, out.Status, out.Value)
	},
}

// load drives the cluster and records what it saw.
type load struct {
	t       *testing.T
	t0      time.Time
	done    chan struct{}
	wg      sync.WaitGroup
	roots   []string
	mu      sync.Mutex
	targets []*cnode
	acked   []string
	ops     []porcupine.Operation
	counts  map[string]int // "write 503" -> n
}

func newLoad(t *testing.T, nodes []*cnode) *load {
	t.Helper()
	l := &load{t: t, t0: time.Now(), done: make(chan struct{}), targets: append([]*cnode(nil), nodes...),
		counts: map[string]int{}}
	for i := range chainCount {
		st, body := apiDo(client, nodes[0].httpAddr, "POST", "/memory/write",
			map[string]any{"content": fmt.Sprintf("Root of chain %d: %s", i, randomWords())})
		if st != 200 || body["stored"] != true {
			t.Fatalf("chain root %d: %d %v", i, st, body)
		}
		l.roots = append(l.roots, body["atom_id"].(string))
	}
	return l
}

// randomWords makes content no earlier write is near (the write gate only
// refuses near-identical text).
func randomWords() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return fmt.Sprintf("note %s concerning %s and %s", h[:8], h[8:16], h[16:])
}

func (l *load) start() {
	for w := range plainWriters {
		l.wg.Go(func() { l.writer(uint64(w)) })
	}
	for k := range chainCount * clientsPerChain {
		l.wg.Go(func() { l.chainClient(uint64(k), l.roots[k%chainCount]) })
	}
}

func (l *load) stop() {
	close(l.done)
	l.wg.Wait()
}

// drop stops sending to a killed node.
func (l *load) drop(cn *cnode) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.targets = slicesDelete(l.targets, cn)
}

func slicesDelete(list []*cnode, x *cnode) []*cnode {
	out := list[:0:0]
	for _, v := range list {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

func (l *load) pick(rng *mrand.Rand) *cnode {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.targets[rng.IntN(len(l.targets))]
}

func (l *load) stopped() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *load) now() int64 { return int64(time.Since(l.t0)) }

func (l *load) count(what string, status int) {
	l.mu.Lock()
	l.counts[fmt.Sprintf("%s %d", what, status)]++
	l.mu.Unlock()
}

func (l *load) ack(id string) {
	l.mu.Lock()
	l.acked = append(l.acked, id)
	l.mu.Unlock()
}

func (l *load) record(client int, in linInput, out linOutput, call, ret int64) {
	l.mu.Lock()
	l.ops = append(l.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
	l.mu.Unlock()
}

func (l *load) writer(seed uint64) {
	rng := mrand.New(mrand.NewPCG(seed, 1))
	hc := &http.Client{Timeout: 5 * time.Second}
	for !l.stopped() {
		st, body := apiDo(hc, l.pick(rng).httpAddr, "POST", "/memory/write", map[string]any{"content": randomWords()})
		l.count("write", st)
		if st == 200 && body["stored"] == true {
			l.ack(body["atom_id"].(string))
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// chainClient follows one chain: it reads its believed head, or tries to
// supersede it; a lost answer leaves the head to be read again.
func (l *load) chainClient(seed uint64, head string) {
	rng := mrand.New(mrand.NewPCG(seed, 2))
	hc := &http.Client{Timeout: 5 * time.Second}
	id := int(seed)
	for !l.stopped() {
		addr := l.pick(rng).httpAddr
		call := l.now()
		if rng.IntN(2) == 0 {
			st, body := apiDo(hc, addr, "GET", "/memory/atoms/"+head, nil)
			l.count("read", st)
			if st != 200 && st != 404 {
				time.Sleep(20 * time.Millisecond)
				continue // a failed read has no effect
			}
			next, _ := body["superseded_by"].(string)
			l.record(id, linInput{Read: true, Target: head}, linOutput{Status: st, Value: next}, call, l.now())
			if next != "" {
				head = next
			}
			continue
		}
		content := randomWords()
		st, body := apiDo(hc, addr, "POST", "/memory/write", map[string]any{"content": content, "supersedes": []string{head}})
		l.count("supersede", st)
		in := linInput{Target: head, Content: content}
		switch {
		case st == 200 && body["stored"] == true:
			newID := body["atom_id"].(string)
			l.ack(newID)
			l.record(id, in, linOutput{Status: 200, Value: newID}, call, l.now())
			head = newID
		case st == http.StatusConflict:
			details, _ := body["details"].(map[string]any)
			succ, _ := details["successor"].(string)
			l.record(id, in, linOutput{Status: st, Value: succ}, call, l.now())
			if succ != "" {
				head = succ
			}
		case st == 404 || st == 200:
			l.record(id, in, linOutput{Status: st}, call, l.now())
		default: // no definite answer: it may take effect at any time from now on
			l.record(id, in, linOutput{Status: statusUnknown}, call, math.MaxInt64)
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (l *load) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

func (l *load) ackedIDs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acked...)
}

func (l *load) history() []porcupine.Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]porcupine.Operation(nil), l.ops...)
}

// waitAcked waits until n writes were acknowledged in all.
func (l *load) waitAcked(n int) {
	l.t.Helper()
	waitFor(l.t, fmt.Sprintf("%d acknowledged writes", n), 60*time.Second, func() bool { return l.ackedCount() >= n })
}

func (l *load) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.counts))
	for k := range l.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", strings.Replace(k, " 0", " no-answer", 1), l.counts[k])
	}
	return fmt.Sprintf("%d acknowledged writes, %d recorded chain operations; %s",
		len(l.acked), len(l.ops), strings.Join(parts, ", "))
}

// exportedAtom is one line of GET /memory/export.
type exportedAtom struct {
	AtomID       string   `json:"atom_id"`
	Content      string   `json:"content"`
	Supersedes   []string `json:"supersedes"`
	SupersededBy *string  `json:"superseded_by"`
}

func exportAll(t *testing.T, cn *cnode) map[string]exportedAtom {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+cn.httpAddr+"/api/v1/memory/export", nil)
	req.Header.Set("X-Api-Key", clusterKey)
	res, err := client.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("export: %v %v", err, res)
	}
	defer res.Body.Close()
	byContent := map[string]exportedAtom{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var a exportedAtom
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("export line: %v", err)
		}
		byContent[a.Content] = a
	}
	return byContent
}

// checkLinearizable resolves the supersedes whose answer was lost (through
// the export, by their unique content), checks that no refused supersede
// was stored, and runs porcupine over the history.
func checkLinearizable(t *testing.T, via *cnode, ops []porcupine.Operation) {
	t.Helper()
	atoms := exportAll(t, via)
	var history []porcupine.Operation
	unknown, applied := 0, 0
	for _, op := range ops {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		a, stored := atoms[in.Content]
		switch {
		case in.Read:
		case out.Status == statusUnknown:
			unknown++
			if !stored {
				continue // never applied: no effect, nothing observed
			}
			applied++
			in.Written = a.AtomID
			op.Input = in
		case out.Status == 200 && (!stored || a.AtomID != out.Value):
			t.Errorf("supersede of %s answered %s, but the export holds %+v", in.Target, out.Value, a)
		case out.Status != 200 && stored:
			t.Errorf("supersede of %s answered %d %q, yet its atom %s was stored", in.Target, out.Status, out.Value, a.AtomID)
		}
		history = append(history, op)
	}
	res, info := porcupine.CheckOperationsVerbose(supersedeModel, history, linearizableGuard)
	t.Logf("linearizability: %s over %d operations (%d supersedes without an answer, %d of them applied)",
		res, len(history), unknown, applied)
	if res == porcupine.Illegal {
		path := filepath.Join(os.TempDir(), fmt.Sprintf("hebb-linearizability-%d.html", time.Now().UnixNano()))
		if err := porcupine.VisualizePath(supersedeModel, info, path); err == nil {
			t.Logf("visualization: %s", path)
		}
		t.Error("the supersede / read-by-ID history is not linearizable")
	}
}

// runAdmin runs `hebb admin args...` and returns its combined output.
func runAdmin(args ...string) (string, error) {
	cmd := exec.Command(hebbBin, append([]string{"admin"}, args...)...)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSupersedeModel checks the model on small histories: what a correct
// store may answer is linearizable, the known anomalies are not.
func TestSupersedeModel(t *testing.T) {
	op := func(client int, in linInput, status int, value string, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Output: linOutput{Status: status, Value: value},
			Call: call, Return: ret}
	}
	sup, read := linInput{Target: "a"}, linInput{Read: true, Target: "a"}
	tests := []struct {
		name    string
		history []porcupine.Operation
		want    bool
	}{
		{"one winner, the loser names it", []porcupine.Operation{
			op(0, sup, 200, "b", 0, 10), op(1, sup, http.StatusConflict, "b", 1, 11), op(2, read, 200, "b", 12, 13)}, true},
		{"concurrent read may see before or after", []porcupine.Operation{
			op(0, sup, 200, "b", 0, 10), op(1, read, 200, "", 1, 11)}, true},
		{"two winners", []porcupine.Operation{
			op(0, sup, 200, "b", 0, 10), op(1, sup, 200, "c", 1, 11)}, false},
		{"stale read after the write returned", []porcupine.Operation{
			op(0, sup, 200, "b", 0, 10), op(1, read, 200, "", 11, 12)}, false},
		{"conflict naming another successor", []porcupine.Operation{
			op(0, sup, 200, "b", 0, 10), op(1, sup, http.StatusConflict, "c", 11, 12)}, false},
		{"conflict before anything was written", []porcupine.Operation{
			op(0, sup, http.StatusConflict, "b", 0, 1)}, false},
		{"lost answer applied later", []porcupine.Operation{
			op(0, linInput{Target: "a", Written: "b"}, statusUnknown, "", 0, math.MaxInt64),
			op(1, read, 200, "", 1, 2), op(1, read, 200, "b", 3, 4)}, true},
		{"read of a missing atom", []porcupine.Operation{op(0, read, 404, "", 0, 1)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(supersedeModel, tc.history); got != tc.want {
				t.Errorf("linearizable = %v, want %v", got, tc.want)
			}
		})
	}
}
