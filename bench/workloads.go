package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// populateWorkers is the number of concurrent populate batches.
const populateWorkers = 2

// populate brings each tenant to size atoms; the IDs of new atoms go to
// pool (when not nil).
func (t *target) populate(ctx context.Context, keys []string, streams []uint64, size int64, pool *idPool) error {
	p := &populator{api: t.api, gen: t.gen, workers: populateWorkers, pool: pool, progress: t.cfg.Progress}
	res, err := p.fill(ctx, keys, streams, size)
	t.rep.Populate = &res
	return err
}

func (t *target) phase(ctx context.Context, name string, gen Generator) error {
	rate := t.cfg.Rate
	desc := fmt.Sprintf("%g/s open loop", rate)
	if rate == 0 {
		desc = "closed loop"
	}
	fmt.Fprintf(progress(t.cfg.Progress), "%s: %s, %s, %d workers\n", name, desc, t.cfg.Duration, t.cfg.Concurrency)
	c0, counted := t.api.cpuSeconds()
	res, err := RunLoad(ctx, t.api, gen, LoadConfig{Name: name, Rate: rate, Duration: t.cfg.Duration,
		Concurrency: t.cfg.Concurrency, Progress: t.cfg.Progress})
	if err != nil {
		return err
	}
	if c1, ok := t.api.cpuSeconds(); counted && ok {
		res.ServerCPU = serverCPU(c0, c1, res)
	}
	t.rep.Phases = append(t.rep.Phases, res)
	return nil
}

// reqRNG is the random source of request i of a phase.
func (t *target) reqRNG(i uint64) *rand.Rand {
	return rand.New(rand.NewPCG(t.cfg.Seed^0x72657175657374, i))
}

func (t *target) search(ctx context.Context) error {
	size := int64(t.cfg.Size)
	if err := t.populate(ctx, []string{t.key}, []uint64{StreamPopulate}, size, nil); err != nil {
		return err
	}
	if err := t.floor(ctx); err != nil {
		return err
	}
	n := uint64(max(size, 1))
	if err := t.warmUp(ctx, n); err != nil {
		return err
	}
	return t.phase(ctx, OpSearch, func(i uint64) Request {
		return searchRequest(t.key, t.gen.Query(StreamPopulate, n, i), nil)
	})
}

// searchWarmup searches are sent, unrecorded, before a search phase: a
// fresh server's first searches (code paths, caches, connections) set the
// p99.9 and max of a short run (8-25 ms against 4 at most after them).
// Their queries are not the phase's (warmupQueries on), so no answer the
// phase asks for is cached by them.
const (
	searchWarmup  = 20
	warmupQueries = 1 << 62
)

func (t *target) warmUp(ctx context.Context, n uint64) error {
	for i := range uint64(searchWarmup) {
		if err := ctx.Err(); err != nil {
			return err
		}
		req := searchRequest(t.key, t.gen.Query(StreamPopulate, n, warmupQueries+i), nil)
		if key := ErrorKey(t.api.Do(&req)); key != "" {
			return fmt.Errorf("warm-up search: %s", key)
		}
	}
	return nil
}

// writeBase returns the first write-stream index of this run: the tenant's
// atom count, so that a second run on the same tenant writes new texts.
func (t *target) writeBase(key string) (uint64, error) {
	n, err := tenantAtoms(t.api, key)
	return uint64(n), err
}

func (t *target) write(ctx context.Context) error {
	base, err := t.writeBase(t.key)
	if err != nil {
		return err
	}
	b := uint64(t.cfg.Batch)
	if b == 1 {
		return t.phase(ctx, OpWrite, func(i uint64) Request {
			return writeRequest(t.key, t.gen.items(StreamWrite, base+i, base+i+1)[0], nil)
		})
	}
	err = t.phase(ctx, OpWriteBatch, func(i uint64) Request {
		from := base + i*b
		return batchRequest(t.key, t.gen.items(StreamWrite, from, from+b), nil)
	})
	if n := len(t.rep.Phases); err == nil && n > 0 {
		ph := t.rep.Phases[n-1]
		ph.ItemsPerRequest = t.cfg.Batch
		if c := ph.ServerCPU; c != nil {
			c.PerItemUs = c.PerRequestUs / float64(t.cfg.Batch)
		}
	}
	return err
}

// mixOp draws the operation of a mixed request: 70% search, 15% write,
// 10% feedback, 5% recent.
func mixOp(rng *rand.Rand) string {
	switch r := rng.IntN(100); {
	case r < 70:
		return OpSearch
	case r < 85:
		return OpWrite
	case r < 95:
		return OpFeedback
	}
	return OpRecent
}

// mixedRequest is request i of a mixed load on one tenant whose populated
// atoms are the first n of stream; writes continue the write stream at
// base + i.
// mixedRequest is request i of a mixed phase. Its writes take the write
// stream's items base, base+1, ... in the order they are made (writes
// counts them), so that the next run, starting at the tenant's atom count,
// writes new texts: indexing them by i (every request) left gaps the next
// run's writes fell into, duplicates the gate refused.
func (t *target) mixedRequest(rng *rand.Rand, i uint64, key string, stream, n, base uint64, writes *atomic.Uint64, pool *idPool) Request {
	op := mixOp(rng)
	if op == OpFeedback {
		ids := pool.pick(rng, 1+rng.IntN(3))
		if len(ids) == 0 {
			op = OpSearch
		} else {
			return feedbackRequest(key, ids, float64(rng.IntN(201)-100)/100)
		}
	}
	switch op {
	case OpWrite:
		w := base + writes.Add(1) - 1
		return writeRequest(key, t.gen.items(StreamWrite, w, w+1)[0], pool)
	case OpRecent:
		return recentRequest(key)
	}
	return searchRequest(key, t.gen.Query(stream, n, i), pool)
}

func (t *target) mixed(ctx context.Context) error {
	size := int64(t.cfg.Size)
	pool := newIDPool()
	if err := t.populate(ctx, []string{t.key}, []uint64{StreamPopulate}, size, pool); err != nil {
		return err
	}
	base, err := t.writeBase(t.key)
	if err != nil {
		return err
	}
	n := uint64(max(size, 1))
	var writes atomic.Uint64
	return t.phase(ctx, WorkloadMixed, func(i uint64) Request {
		return t.mixedRequest(t.reqRNG(i), i, t.key, StreamPopulate, n, base, &writes, pool)
	})
}

type orgAnswer struct {
	OrgID  string `json:"org_id"`
	APIKey string `json:"api_key"`
}

func (t *target) tenants(ctx context.Context) error {
	if t.api.admin == "" {
		return ErrNoAdminToken
	}
	n := t.cfg.Tenants
	keys, streams, pools := make([]string, n), make([]uint64, n), make([]*idPool, n)
	fmt.Fprintf(progress(t.cfg.Progress), "tenants: creating %d orgs through the admin API...\n", n)
	stamp := time.Now().UTC().Format("20060102T150405")
	for i := range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		var org orgAnswer
		name := fmt.Sprintf("bench-%s-%d", stamp, i)
		if err := t.api.Call("POST", "/admin/v1/orgs", "", map[string]string{"name": name}, &org); err != nil {
			return fmt.Errorf("cannot create tenant %d: %w", i, err)
		}
		keys[i], streams[i], pools[i] = org.APIKey, StreamTenant+uint64(i), newIDPool()
	}
	per := int64(t.cfg.Size / n)
	if err := t.populate(ctx, keys, streams, per, nil); err != nil {
		return err
	}
	writes := make([]atomic.Uint64, n)
	return t.phase(ctx, WorkloadTenants, func(i uint64) Request {
		rng := t.reqRNG(i)
		k := rng.IntN(n)
		// Writes of tenant k start after its populated atoms.
		return t.mixedRequest(rng, i, keys[k], streams[k], uint64(per), uint64(per), &writes[k], pools[k])
	})
}

// floorCalls is how many GET /health round trips measure each floor;
// floorPause is the idle time before each call of the idle floor.
const (
	floorCalls = 500
	floorPause = time.Millisecond
)

// floor measures the round trip of the cheapest call, one at a time, into
// the report: back to back, and after floorPause of idling (as a client
// does while the server searches): the part of a search's latency no search
// can remove.
func (t *target) floor(ctx context.Context) error {
	busy, err := t.roundTrips(ctx, 0)
	if err != nil {
		return err
	}
	idle, err := t.roundTrips(ctx, floorPause)
	if err != nil {
		return err
	}
	t.rep.Floor, t.rep.IdleFloor = &busy, &idle
	return nil
}

// roundTrips times floorCalls GET /health calls, each after pause.
func (t *target) roundTrips(ctx context.Context, pause time.Duration) (Latency, error) {
	h := newHist()
	req := Request{Op: "health", Method: "GET", Path: "/health"}
	for range floorCalls {
		if err := ctx.Err(); err != nil {
			return Latency{}, err
		}
		time.Sleep(pause)
		start := time.Now()
		if key := ErrorKey(t.api.Do(&req)); key != "" {
			return Latency{}, fmt.Errorf("cannot measure the round-trip floor: GET /health: %s", key)
		}
		record(h, time.Since(start))
	}
	return Summarize(h), nil
}
