package pack_test

import (
	"testing"

	"github.com/hebbdb/hebb/router/pack"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		name string
		m    pack.Memory
		want pack.Section
	}{
		{"metadata type", pack.Memory{Content: "dark theme everywhere", Metadata: []byte(`{"type":"Preference"}`)}, pack.Preferences},
		{"metadata kind", pack.Memory{Content: "we like Go", Metadata: []byte(`{"kind":"decision"}`)}, pack.Decisions},
		{"metadata warning", pack.Memory{Content: "x", Metadata: []byte(`{"type":"warning"}`)}, pack.Warnings},
		// The first of type and kind that names a section (kind was not read
		// when type held anything).
		{"metadata kind after another type", pack.Memory{Content: "x", Metadata: []byte(`{"type":"custom","kind":"warning"}`)}, pack.Warnings},
		{"metadata unknown falls back", pack.Memory{Content: "The user prefers tabs", Metadata: []byte(`{"type":"misc"}`)}, pack.Preferences},
		{"metadata lesson, negative", pack.Memory{Content: "x", Metadata: []byte(`{"type":"lesson"}`), Valence: -0.5}, pack.Warnings},
		{"metadata fact beats valence", pack.Memory{Content: "x", Metadata: []byte(`{"type":"fact"}`), Valence: -0.5}, pack.Facts},
		{"preference words", pack.Memory{Content: "The user prefers a dark theme"}, pack.Preferences},
		{"favourite", pack.Memory{Content: "Her favourite editor is Helix"}, pack.Preferences},
		{"decision words", pack.Memory{Content: "We decided to ship on Tuesdays"}, pack.Decisions},
		{"will", pack.Memory{Content: "The team will use Postgres 16"}, pack.Decisions},
		{"lesson words", pack.Memory{Content: "Lesson learned: pin the base image"}, pack.Lessons},
		{"soft lesson", pack.Memory{Content: "Avoid force pushes to main"}, pack.Lessons},
		{"negative valence", pack.Memory{Content: "Friday deploys", Valence: -0.4}, pack.Warnings},
		{"negative lesson", pack.Memory{Content: "Mistake: we skipped the canary", Valence: -0.2}, pack.Warnings},
		{"slightly negative is not an outcome", pack.Memory{Content: "The API runs on port 8080", Valence: -0.05}, pack.Facts},
		{"concept words", pack.Memory{Content: "dark theme", Concepts: []string{"preference"}}, pack.Preferences},
		{"fact", pack.Memory{Content: "The API runs on port 8080"}, pack.Facts},
		{"bad metadata", pack.Memory{Content: "The API runs on port 8080", Metadata: []byte(`{`)}, pack.Facts},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := pack.Classify(tc.m); got != tc.want {
				t.Errorf("Classify = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSectionTitles(t *testing.T) {
	for _, s := range pack.SectionOrder() {
		if s.Title() == "" {
			t.Errorf("section %s has no title", s)
		}
	}
}
