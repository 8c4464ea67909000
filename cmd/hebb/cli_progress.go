package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws a one-line progress bar on a terminal's stderr; when
// stderr is not a terminal it draws nothing.
type progress struct {
	w     io.Writer
	on    bool
	label string
	last  time.Time
	drawn bool
}

const (
	progressEvery = 100 * time.Millisecond
	barWidth      = 24
)

func newProgress(env *cliEnv, label string) *progress {
	return &progress{w: env.stderr, on: env.stderrTTY, label: label}
}

// show redraws the line: a bar of cur/total when total > 0, then text.
// Redraws are throttled unless force.
func (p *progress) show(cur, total int64, text string, force bool) {
	if !p.on {
		return
	}
	now := time.Now()
	if !force && now.Sub(p.last) < progressEvery {
		return
	}
	p.last, p.drawn = now, true
	bar := ""
	if total > 0 {
		filled := int(min(cur, total) * barWidth / total)
		bar = "[" + strings.Repeat("#", filled) + strings.Repeat("-", barWidth-filled) + "] "
	}
	fmt.Fprintf(p.w, "\r\033[K%s %s%s", p.label, bar, text)
}

// clear removes the line before the summary is printed.
func (p *progress) clear() {
	if p.on && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}
