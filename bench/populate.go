package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// populateBatch is the batch size of populate writes (the API allows 500).
const populateBatch = 250

// PopulateResult describes how a tenant (or all tenants) got its atoms.
type PopulateResult struct {
	Tenants   int     `json:"tenants"`
	Target    int64   `json:"target_atoms"`
	Existing  int64   `json:"existing_atoms"`
	Added     int64   `json:"added_atoms"`
	Filtered  int64   `json:"filtered_atoms"`
	DurationS float64 `json:"duration_s"`
	AtomsPerS float64 `json:"atoms_per_s"`
}

type statsBody struct {
	TotalAtoms int64 `json:"total_atoms"`
}

// tenantAtoms returns the tenant's total_atoms.
func tenantAtoms(api *API, key string) (int64, error) {
	var st statsBody
	if err := api.Call("GET", "/memory/stats", key, nil, &st); err != nil {
		return 0, err
	}
	return st.TotalAtoms, nil
}

type batchAnswer struct {
	TotalCount  int `json:"total_count"`
	StoredCount int `json:"stored_count"`
	Results     []struct {
		AtomID *string `json:"atom_id"`
	} `json:"results"`
}

// populator fills tenants with texts of their streams through batched writes.
type populator struct {
	api      *API
	gen      *TextGen
	workers  int
	pool     *idPool
	progress io.Writer
	added    atomic.Int64
	filtered atomic.Int64
	want     int64
}

// job is one batch: texts [from, to) of stream for key.
type job struct {
	key      string
	stream   uint64
	from, to uint64
}

// fill writes what each tenant lacks to reach size atoms: tenant t (key
// keys[t]) gets texts of stream streams[t] from its current total_atoms on.
func (p *populator) fill(ctx context.Context, keys []string, streams []uint64, size int64) (PopulateResult, error) {
	start := time.Now()
	res := PopulateResult{Tenants: len(keys), Target: size * int64(len(keys))}
	var jobs []job
	for t, key := range keys {
		have, err := tenantAtoms(p.api, key)
		if err != nil {
			return res, err
		}
		res.Existing += have
		if t == 0 && have > 0 {
			p.checkStream(key, streams[t], uint64(min(have, size)))
		}
		for from := uint64(have); from < uint64(size); from += populateBatch {
			jobs = append(jobs, job{key: key, stream: streams[t], from: from, to: min(from+populateBatch, uint64(size))})
		}
	}
	for _, j := range jobs {
		p.want += int64(j.to - j.from)
	}
	err := p.run(ctx, jobs)
	res.Added, res.Filtered = p.added.Load(), p.filtered.Load()
	res.DurationS = time.Since(start).Seconds()
	if res.DurationS > 0 {
		res.AtomsPerS = float64(res.Added) / res.DurationS
	}
	return res, err
}

// checkStream warns when a tenant that already holds atoms does not hold
// the first and last of the n texts of stream it is taken to hold: filled by
// write runs, another --seed or other data, its atom count passes for
// populated while the queries, windows of those texts, find nothing like
// them. It asks for each text itself (its top hit is the text when stored).
func (p *populator) checkStream(key string, stream, n uint64) {
	for _, i := range []uint64{0, n - 1} {
		text := p.gen.Text(stream, i)
		var got struct {
			Items []struct {
				Content string `json:"content"`
			} `json:"items"`
		}
		err := p.api.Call("POST", "/memory/read", key, map[string]any{"query": text, "top_k": 1, "min_relevance": 0}, &got)
		if err == nil && (len(got.Items) == 0 || got.Items[0].Content != text) {
			fmt.Fprintf(progress(p.progress), "warning: the tenant holds atoms, but not this seed's populate texts (text %d is missing): "+
				"its searches will not find their queries' sources; use a fresh tenant, or the --seed that filled it\n", i)
			return
		}
	}
}

func (p *populator) run(ctx context.Context, jobs []job) error {
	if len(jobs) == 0 {
		return nil
	}
	ch := make(chan job)
	errc := make(chan error, p.workers)
	var wg sync.WaitGroup
	for range p.workers {
		wg.Go(func() {
			for j := range ch {
				if err := p.write(j); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	stop := p.report()
	var err error
feed:
	for _, j := range jobs {
		select {
		case ch <- j:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(ch)
	wg.Wait()
	stop()
	if err == nil && len(errc) > 0 {
		err = <-errc
	}
	if err != nil {
		return fmt.Errorf("cannot populate: %w", err)
	}
	return nil
}

func (p *populator) write(j job) error {
	var ans batchAnswer
	body := batchBody{Items: p.gen.items(j.stream, j.from, j.to)}
	if err := p.api.Call("POST", "/memory/write-batch", j.key, body, &ans); err != nil {
		return err
	}
	for _, r := range ans.Results {
		if r.AtomID != nil {
			p.pool.add(*r.AtomID)
		}
	}
	p.added.Add(int64(ans.StoredCount))
	p.filtered.Add(int64(ans.TotalCount - ans.StoredCount))
	return nil
}

// report prints the progress once a second until stop is called.
func (p *populator) report() (stop func()) {
	if p.progress == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				n := p.added.Load() + p.filtered.Load()
				el := time.Since(start).Seconds()
				fmt.Fprintf(p.progress, "populate %5.0fs  %d/%d atoms  (%.0f/s)\n", el, n, p.want, float64(n)/el)
			}
		}
	}()
	return func() { close(done); <-finished }
}
