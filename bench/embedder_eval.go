package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hebbdb/hebb/router/embedder"
	"github.com/hebbdb/hebb/router/embedder/use"
	"github.com/hebbdb/hebb/vecmath"
)

// EmbedderEvalOptions configures RunEmbedderEval (`hebb bench embedder`).
type EmbedderEvalOptions struct {
	// ParaphrasePath is the paraphrase set (ref<TAB>modern<TAB>older); the
	// corpus is the older wordings, the queries the modern ones. Empty skips
	// it.
	ParaphrasePath string
	// ParaphraseLimit is how many pairs to read from the start; 0 means 5,000.
	ParaphraseLimit int
	// MemoryPath is the agent-memory set in the same format (id, query,
	// stored memory). Empty skips it.
	MemoryPath string
	// Weights are extra semantic weights to evaluate the builtin embedder
	// with, besides use.DefaultSemanticWeight; 1 is the semantic part alone.
	Weights []float64
	// LatencyTime is how long to embed each text length for the latency
	// figures; 0 means 300ms, negative skips them.
	LatencyTime time.Duration
}

// Defaults for EmbedderEvalOptions, relative to the repository root.
const (
	DefaultParaphrasePath  = "../shared/data/paraphrase-pairs.tsv"
	DefaultMemoryPairsPath = "router/embedder/use/testdata/memory-pairs.tsv"
	defaultParaphraseLimit = 5000
	// evalLowOverlap is the share of a query's distinct words found in its
	// target below which the query counts as low-overlap.
	evalLowOverlap = 0.45
	// evalDupFalseRate is the share of adjacent-pair negatives the duplicate
	// threshold admits.
	evalDupFalseRate = 0.01
)

// EmbedderScores are the retrieval figures of one embedder on one set.
type EmbedderScores struct {
	Set, Embedder string
	Dim, N        int
	NDCG, Recall  float64 // @10, all queries
	NLow          int     // low-overlap queries
	LowNDCG       float64 // @10
	LowRecall     float64 // @10
	NLowDistinct  int     // distinct low-overlap query texts
	LowDistinct   float64 // nDCG@10 over distinct low-overlap query texts
	DupThreshold  float64 // cosine admitting evalDupFalseRate of negatives
	DupRecall     float64 // share of paraphrase pairs at or above it
	Positive      Spread  // cosine of each query and its target
	Adjacent      Spread  // cosine of query i and target i+1
	Random        Spread  // cosine of query i and target i+n/2
}

// Spread summarises a cosine distribution.
type Spread struct {
	Mean, P5, P25, P50, P75, P95 float64
}

// evalSet is a loaded pair set.
type evalSet struct {
	name    string
	queries []string
	docs    []string
}

type namedEmbedder struct {
	label string
	e     embedder.Embedder
}

// RunEmbedderEval measures the hash and builtin embedders on the paraphrase
// set and the agent-memory set, writes a report to w: retrieval figures,
// cosine distributions and latency per text length.
func RunEmbedderEval(w io.Writer, opts EmbedderEvalOptions) error {
	embedders, err := evalEmbedders(opts.Weights)
	if err != nil {
		return err
	}
	var sets []evalSet
	if opts.ParaphrasePath != "" {
		limit := opts.ParaphraseLimit
		if limit <= 0 {
			limit = defaultParaphraseLimit
		}
		s, err := loadEvalSet("paraphrase", opts.ParaphrasePath, limit)
		if err != nil {
			return err
		}
		sets = append(sets, s)
	}
	if opts.MemoryPath != "" {
		s, err := loadEvalSet("memory", opts.MemoryPath, math.MaxInt)
		if err != nil {
			return err
		}
		sets = append(sets, s)
	}
	var scores []EmbedderScores
	for _, s := range sets {
		for _, ne := range embedders {
			sc, err := scoreEmbedder(s, ne)
			if err != nil {
				return err
			}
			scores = append(scores, sc)
		}
	}
	writeScores(w, scores)
	if opts.LatencyTime >= 0 {
		d := opts.LatencyTime
		if d == 0 {
			d = 300 * time.Millisecond
		}
		return writeLatency(w, embedders, d)
	}
	return nil
}

func evalEmbedders(weights []float64) ([]namedEmbedder, error) {
	out := []namedEmbedder{{"hash", embedder.NewHash(embedder.HashDim)}}
	b, err := use.New()
	if err != nil {
		return nil, fmt.Errorf("cannot build the builtin embedder: %w", err)
	}
	out = append(out, namedEmbedder{"builtin", b})
	for _, wt := range weights {
		e, err := use.NewWeighted(wt)
		if err != nil {
			return nil, fmt.Errorf("cannot build the builtin embedder: %w", err)
		}
		out = append(out, namedEmbedder{fmt.Sprintf("builtin w=%.2f", wt), e})
	}
	return out, nil
}

// loadEvalSet reads up to limit lines of ref<TAB>query<TAB>target.
func loadEvalSet(name, path string, limit int) (evalSet, error) {
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return evalSet{}, fmt.Errorf("cannot open %s set: %w", name, err)
	}
	defer f.Close()
	s := evalSet{name: name}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() && len(s.queries) < limit {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 {
			return evalSet{}, fmt.Errorf("%s line %d: want 3 tab-separated columns, got %d: %w",
				path, len(s.queries)+1, len(cols), ErrBadConfig)
		}
		s.queries = append(s.queries, cols[1])
		s.docs = append(s.docs, cols[2])
	}
	if err := sc.Err(); err != nil {
		return evalSet{}, fmt.Errorf("cannot read %s set: %w", name, err)
	}
	if len(s.queries) < 3 {
		return evalSet{}, fmt.Errorf("%s set %s has %d pairs: %w", name, path, len(s.queries), ErrBadConfig)
	}
	return s, nil
}

func scoreEmbedder(s evalSet, ne namedEmbedder) (EmbedderScores, error) {
	ctx := context.Background()
	qv, err := ne.e.Embed(ctx, s.queries)
	if err != nil {
		return EmbedderScores{}, fmt.Errorf("cannot embed %s queries: %w", s.name, err)
	}
	dv, err := ne.e.Embed(ctx, s.docs)
	if err != nil {
		return EmbedderScores{}, fmt.Errorf("cannot embed %s corpus: %w", s.name, err)
	}
	sc := EmbedderScores{Set: s.name, Embedder: ne.label, Dim: ne.e.Dim(), N: len(qv)}
	rankScores(&sc, s, targetRanks(qv, dv))
	cosineScores(&sc, qv, dv)
	return sc, nil
}

// targetRanks returns, for each query i, the 1-based rank of document i by
// dot product; a tie does not push the target down (the paraphrase corpus
// repeats some verses word for word).
func targetRanks(qv, dv [][]float32) []int {
	ranks := make([]int, len(qv))
	const workers = 2
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(qv); i += workers {
				target := vecmath.Dot(qv[i], dv[i])
				rank := 1
				for j, d := range dv {
					if j != i && vecmath.Dot(qv[i], d) > target {
						rank++
					}
				}
				ranks[i] = rank
			}
		})
	}
	wg.Wait()
	return ranks
}

func rankScores(sc *EmbedderScores, s evalSet, ranks []int) {
	seen := make(map[string]bool)
	for i, rank := range ranks {
		gain, hit := 0.0, 0.0
		if rank <= 10 {
			gain, hit = 1/math.Log2(float64(rank)+1), 1
		}
		sc.NDCG += gain
		sc.Recall += hit
		if wordOverlap(s.queries[i], s.docs[i]) >= evalLowOverlap {
			continue
		}
		sc.NLow++
		sc.LowNDCG += gain
		sc.LowRecall += hit
		if !seen[s.queries[i]] {
			seen[s.queries[i]] = true
			sc.NLowDistinct++
			sc.LowDistinct += gain
		}
	}
	sc.NDCG /= float64(len(ranks))
	sc.Recall /= float64(len(ranks))
	if sc.NLow > 0 {
		sc.LowNDCG /= float64(sc.NLow)
		sc.LowRecall /= float64(sc.NLow)
		sc.LowDistinct /= float64(sc.NLowDistinct)
	}
}

// wordOverlap is the share of the query's distinct words found in target.
func wordOverlap(query, target string) float64 {
	in := make(map[string]bool)
	for _, t := range embedder.Tokens(target) {
		in[t] = true
	}
	seen := make(map[string]bool)
	found := 0
	for _, t := range embedder.Tokens(query) {
		if !seen[t] {
			seen[t] = true
			if in[t] {
				found++
			}
		}
	}
	if len(seen) == 0 {
		return 1
	}
	return float64(found) / float64(len(seen))
}

// cosineScores fills the distributions and the duplicate threshold: the
// cosine that admits evalDupFalseRate of the adjacent-pair negatives, and
// the share of true pairs at or above it.
func cosineScores(sc *EmbedderScores, qv, dv [][]float32) {
	n := len(qv)
	pos := make([]float64, n)
	adj := make([]float64, 0, n-1)
	rnd := make([]float64, n)
	for i := range qv {
		pos[i] = float64(vecmath.Dot(qv[i], dv[i]))
		if i+1 < n {
			adj = append(adj, float64(vecmath.Dot(qv[i], dv[i+1])))
		}
		rnd[i] = float64(vecmath.Dot(qv[i], dv[(i+n/2)%n]))
	}
	sc.Positive, sc.Adjacent, sc.Random = spread(pos), spread(adj), spread(rnd)
	sorted := slices.Sorted(slices.Values(adj))
	sc.DupThreshold = sorted[min(len(sorted)-1, int(math.Ceil((1-evalDupFalseRate)*float64(len(sorted)))))]
	for _, p := range pos {
		if p >= sc.DupThreshold {
			sc.DupRecall++
		}
	}
	sc.DupRecall /= float64(n)
}

func spread(v []float64) Spread {
	s := slices.Sorted(slices.Values(v))
	q := func(p float64) float64 { return s[int(p*float64(len(s)-1))] }
	var sum float64
	for _, x := range s {
		sum += x
	}
	return Spread{Mean: sum / float64(len(s)), P5: q(0.05), P25: q(0.25), P50: q(0.5), P75: q(0.75), P95: q(0.95)}
}

func writeScores(w io.Writer, scores []EmbedderScores) {
	fmt.Fprintf(w, "retrieval (nDCG@10 / recall@10; low = queries sharing < %.0f%% of their words with the target; "+
		"dup = recall at the cosine admitting %.0f%% of adjacent-pair negatives)\n", 100*evalLowOverlap, 100*evalDupFalseRate)
	fmt.Fprintf(w, "%-10s %-16s %4s %5s  %-13s %-20s %-12s %-14s\n",
		"set", "embedder", "dim", "n", "all", "low (n)", "low distinct", "dup (thresh)")
	for _, s := range scores {
		fmt.Fprintf(w, "%-10s %-16s %4d %5d  %.4f/%.4f %.4f/%.4f (%d) %.4f (%d) %.4f (%.3f)\n",
			s.Set, s.Embedder, s.Dim, s.N, s.NDCG, s.Recall, s.LowNDCG, s.LowRecall, s.NLow,
			s.LowDistinct, s.NLowDistinct, s.DupRecall, s.DupThreshold)
	}
	fmt.Fprintf(w, "\ncosine distributions (mean  p5 p25 p50 p75 p95)\n")
	for _, s := range scores {
		for _, d := range []struct {
			name string
			sp   Spread
		}{{"paraphrase", s.Positive}, {"adjacent", s.Adjacent}, {"random", s.Random}} {
			fmt.Fprintf(w, "%-10s %-16s %-10s %.3f  %.3f %.3f %.3f %.3f %.3f\n", s.Set, s.Embedder, d.name,
				d.sp.Mean, d.sp.P5, d.sp.P25, d.sp.P50, d.sp.P75, d.sp.P95)
		}
	}
}

// writeLatency embeds one text of 10, 30 and 100 words at a time, on one
// goroutine, for d each, and writes the mean latency and embeddings/s.
func writeLatency(w io.Writer, embedders []namedEmbedder, d time.Duration) error {
	fmt.Fprintf(w, "\nlatency, one text per call, one goroutine\n")
	ctx := context.Background()
	for _, ne := range embedders {
		for _, words := range []int{10, 30, 100} {
			texts := []string{evalText(words)}
			n := 0
			start := time.Now()
			for time.Since(start) < d {
				if _, err := ne.e.Embed(ctx, texts); err != nil {
					return fmt.Errorf("cannot embed: %w", err)
				}
				n++
			}
			per := time.Since(start) / time.Duration(n)
			fmt.Fprintf(w, "%-16s %3d words  %8.1f µs  %8.0f embeddings/s\n",
				ne.label, words, float64(per.Nanoseconds())/1e3, float64(time.Second)/float64(per))
		}
	}
	return nil
}

// evalText is a deterministic English-like text of n words, the same the
// embedder benchmarks use.
func evalText(n int) string {
	words := strings.Fields(`the user prefers dark themes in editors and wants the deployment pipeline
		to run tests before merging while the database migration waits for approval from the team lead
		because production traffic peaks on monday mornings`)
	out := make([]string, n)
	for i := range out {
		out[i] = words[(i*7)%len(words)]
	}
	return strings.Join(out, " ")
}
