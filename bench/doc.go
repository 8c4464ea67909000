// Package bench is hebb's benchmark harness: seeded synthetic workloads
// (write, search, mixed, tenants) driven over the public REST API of any base
// URL, a load generator, latency histograms, a JSON report, a PNG latency plot,
// and a side-by-side comparison of vector-scan kernels. `hebb bench` is its
// command-line front end; `make bench` runs the default workload.
//
// # Load generation
//
// Two modes, both with a fixed pool of concurrent workers (connections):
//
//   - Open loop (Rate > 0): request i has an intended send time
//     start + i/Rate. A free worker claims the next slot, waits until its
//     intended time and sends. Latency is measured from the intended time, not
//     from the actual send, so a server that stalls is charged for the requests
//     that queued behind the stall (coordinated-omission correction, as in
//     wrk2). The time from the actual send is kept too, as service time.
//     A worker sleeps until shortly before its slot and spins the rest of
//     the way (up to 1 ms a send, 5% of a core in all), so that its own
//     wake-up is not charged to the server.
//     Slots still unsent when the duration ends are reported as missed: a
//     non-zero count means the rate was not sustained.
//   - Closed loop (Rate == 0): every worker sends back to back; throughput is
//     the maximum the server (and client) sustain at that concurrency, and
//     latency equals service time.
//
// # Invariants
//
//   - Every generated text and request is a pure function of (seed, index):
//     the same flags produce the same requests in the same slots, whichever
//     worker sends them.
//   - Latency histograms (HdrHistogram, microseconds, 3 significant digits)
//     hold every completed request, errors included; errors are also counted
//     by HTTP status or transport failure.
//   - The package talks to hebb only through its REST API (fasthttp client);
//     it imports no server package, so it measures what a client sees. Each
//     phase also reads the node's process_cpu_seconds_total from GET /metrics
//     before and after (ServerCPU), left out when it cannot.
//   - Library code writes progress only to the io.Writer it is given and logs
//     nothing else.
package bench
