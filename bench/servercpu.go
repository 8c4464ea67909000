package bench

import (
	"bufio"
	"bytes"
	"strconv"
)

// ServerCPU is the CPU time the node the run talks to spent during a
// phase: its process_cpu_seconds_total (GET /metrics) read before and after
// the phase. Beside how fast the phase went it says what the work cost,
// and how much of the machine the server had (a client on the same host
// takes the rest). It counts the whole process: work of other clients, or
// of the node's own background (snapshots, compaction), lands in it too.
type ServerCPU struct {
	Seconds float64 `json:"seconds"`
	// Cores is Seconds over the phase's wall time: how many cores were busy.
	Cores float64 `json:"cores"`
	// PerRequestUs is Seconds per answered request, in microseconds;
	// PerItemUs the same per item of a batched write.
	PerRequestUs float64 `json:"per_request_us"`
	PerItemUs    float64 `json:"per_item_us,omitempty"`
}

// cpuMetric is the Prometheus process collector's CPU counter (user and
// system seconds), which hebb's /metrics exports where the platform has it.
var cpuMetric = []byte("process_cpu_seconds_total ")

// cpuSeconds reads the server's CPU counter; false when /metrics does not
// answer with it (served on another --metrics-addr, behind a proxy, or on a
// platform without the counter).
func (a *API) cpuSeconds() (float64, bool) {
	status, body, err := a.do(&Request{Method: "GET", Path: metricsPath}, true)
	if err != nil || status != 200 {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), cpuMetric); ok {
			s, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			if err != nil || !(s >= 0) {
				return 0, false
			}
			return s, true
		}
	}
	return 0, false
}

// metricsPath is the node's metrics endpoint, beside /health.
const metricsPath = "/metrics"

// minCPUPhase is the shortest phase whose server CPU is reported, in
// seconds: the counter moves in 10 ms ticks, and one tick over a phase cut
// short at 1 ms read as 10 cores busy.
const minCPUPhase = 0.1

// serverCPU is what a phase cost the server, from the counter's readings
// before (c0) and after (c1) it; nil when either was missing or the counter
// went back (another process answered), or the phase was too short.
func serverCPU(c0, c1 float64, ph *PhaseResult) *ServerCPU {
	if c1 < c0 || ph.DurationS < minCPUPhase {
		return nil
	}
	s := &ServerCPU{Seconds: c1 - c0, Cores: (c1 - c0) / ph.DurationS}
	if ph.Completed > 0 {
		s.PerRequestUs = s.Seconds / float64(ph.Completed) * 1e6
	}
	return s
}
