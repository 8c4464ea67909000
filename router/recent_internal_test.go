package router

import (
	"testing"
	"time"
)

// TestParseInstant: every ISO-8601 form of an instant a client may send
// for since/until; minutes and basic offsets were refused.
func TestParseInstant(t *testing.T) {
	want := time.Date(2026, 12, 6, 6, 35, 0, 0, time.UTC)
	for _, s := range []string{
		"2026-12-06T06:35:00Z", "2026-12-06T06:35:00.000Z", "2026-12-06T06:35Z", "2026-12-06T06:35",
		"2026-12-06T06:35:00+00:00", "2026-12-06T06:35:00+0000", "2026-12-06T06:35+0000", "2026-12-06T06:35+00",
		"2026-12-06T07:35:00+01:00", "2026-12-06T07:35+0100", "2026-12-06 06:35:00", "2026-12-06 06:35Z",
		" 2026-12-06T06:35:00Z ", "2026-12-06t06:35:00z", "2026-12-06t06:35Z",
	} {
		if got, ok := parseInstant(s); !ok || !got.Equal(want) {
			t.Errorf("parseInstant(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	if got, ok := parseInstant("2026-12-06"); !ok || !got.Equal(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date alone: %v %v", got, ok)
	}
	for _, s := range []string{"", "yesterday", "2026-12-06T06", "2026-13-06T06:35Z", "06:35", "2026-12-06T06:35:00+25:00"} {
		if got, ok := parseInstant(s); ok {
			t.Errorf("parseInstant(%q) = %v, want refused", s, got)
		}
	}
}
