// Package pack turns ranked memories into the context text an agent puts in
// its prompt, within a strict token budget. It is pure: no I/O, no clock, no
// randomness; the router's orchestration endpoint feeds it search results.
//
// Pieces:
//   - Tokenizer counts tokens with a real BPE encoding (cl100k_base or
//     o200k_base): tiktoken's split and merges, with a heap of the byte
//     pairs so a long piece costs O(n log n), not tiktoken-go's O(n²)
//     (bpe.go; its counts are checked against tiktoken-go's). The rank files
//     come from github.com/pkoukk/tiktoken-go-loader, compiled into the
//     binary, so nothing is ever downloaded. An encoding is loaded once per
//     process, on first use.
//   - Classify puts a memory in a section (warnings, preferences,
//     decisions, lessons, facts) from its metadata "type"/"kind", else from
//     its valence and wording.
//   - Redact masks e-mail addresses, phone numbers, card numbers, keys and
//     other secrets; ApplyPrivacy applies a privacy mode to one text.
//   - Pack chooses which memories to render: a 0/1 knapsack that maximises
//     total relevance within the budget (section headers are paid once per
//     section that appears), then renders the sections in a fixed order.
//
// Invariants:
//   - Pack's Text never has more tokens than the budget under the Counter it
//     was given: the rendered text is counted whole at the end and memories
//     are dropped until it fits (an empty text is 0 tokens).
//   - A memory is rendered whole or not at all; every candidate that is not
//     rendered is reported in Omitted with a reason.
//   - Pack is deterministic: the same candidates, budget and counter give the
//     same result.
package pack
