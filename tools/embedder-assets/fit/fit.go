package main

import (
	"log/slog"
	"sync"
)

// fitTable finds the per-piece table T (vocab x 512) whose mean over a
// sentence's pieces best matches the model's mean-pooled hidden state, in
// the least-squares sense, pulled towards prior with weight lambda:
//
//	minimise sum_s |mean_{i in s} T[p_i] - pooled_s|^2 + lambda |T - prior|^2
//
// It solves the normal equations (AᵀA + λI) T = AᵀY + λ prior by conjugate
// gradients, each of the 512 columns on its own, iters iterations. Pieces
// the corpus never shows keep their prior.
func fitTable(samples []sample, prior []float32, vocab int, lambda float32, iters int) []float32 {
	const d = outDim
	const workers = 2
	var wg sync.WaitGroup
	out := make([]float32, vocab*d)
	for w := range workers {
		lo, hi := w*d/workers, (w+1)*d/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			cg := &cgSolver{samples: samples, vocab: vocab, lo: lo, hi: hi, lambda: lambda}
			x := cg.solve(prior, iters, w == 0)
			for v := range vocab {
				copy(out[v*d+lo:v*d+hi], x[v*(hi-lo):(v+1)*(hi-lo)])
			}
		}()
	}
	wg.Wait()
	return out
}

// cgSolver solves for columns [lo, hi) of the table.
type cgSolver struct {
	samples []sample
	vocab   int
	lo, hi  int
	lambda  float32
}

// apply returns (AᵀA + λI) x for x of vocab rows of width hi-lo.
func (c *cgSolver) apply(x []float32) []float32 {
	w := c.hi - c.lo
	out := make([]float32, len(x))
	row := make([]float32, w)
	for _, s := range c.samples {
		clear(row)
		inv := 1 / float32(len(s.ids))
		for _, id := range s.ids {
			axpy(row, x[int(id)*w:(int(id)+1)*w], inv)
		}
		for _, id := range s.ids {
			axpy(out[int(id)*w:(int(id)+1)*w], row, inv)
		}
	}
	axpy(out, x, c.lambda)
	return out
}

// rhs returns AᵀY + λ prior, restricted to the columns.
func (c *cgSolver) rhs(prior []float32) []float32 {
	w := c.hi - c.lo
	out := make([]float32, c.vocab*w)
	for _, s := range c.samples {
		inv := 1 / float32(len(s.ids))
		for _, id := range s.ids {
			axpy(out[int(id)*w:(int(id)+1)*w], s.pooled[c.lo:c.hi], inv)
		}
	}
	axpy(out, c.columns(prior), c.lambda)
	return out
}

// columns extracts the solver's columns of a vocab x 512 table.
func (c *cgSolver) columns(t []float32) []float32 {
	w := c.hi - c.lo
	out := make([]float32, c.vocab*w)
	for v := range c.vocab {
		copy(out[v*w:(v+1)*w], t[v*outDim+c.lo:v*outDim+c.hi])
	}
	return out
}

func (c *cgSolver) solve(prior []float32, iters int, log bool) []float32 {
	w := c.hi - c.lo
	b := c.rhs(prior)
	x := c.columns(prior)
	r := c.apply(x)
	for i := range r {
		r[i] = b[i] - r[i]
	}
	p := append([]float32(nil), r...)
	rr := colDots(r, r, w)
	alpha := make([]float32, w)
	beta := make([]float32, w)
	for it := range iters {
		mp := c.apply(p)
		pmp := colDots(p, mp, w)
		for k := range alpha {
			alpha[k] = 0
			if pmp[k] > 0 {
				alpha[k] = float32(rr[k] / pmp[k])
			}
		}
		for i := range x {
			k := i % w
			x[i] += alpha[k] * p[i]
			r[i] -= alpha[k] * mp[i]
		}
		rr2 := colDots(r, r, w)
		for k := range beta {
			beta[k] = 0
			if rr[k] > 0 {
				beta[k] = float32(rr2[k] / rr[k])
			}
		}
		for i := range p {
			p[i] = r[i] + beta[i%w]*p[i]
		}
		rr = rr2
		if log && it%10 == 0 {
			var s float64
			for _, v := range rr {
				s += v
			}
			slog.Info("fitting table", "iteration", it, "residual", s)
		}
	}
	return x
}

func colDots(a, b []float32, w int) []float64 {
	out := make([]float64, w)
	for i := range a {
		out[i%w] += float64(a[i]) * float64(b[i])
	}
	return out
}

// axpy adds a*x to y.
func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}
