package pack

import (
	"encoding/json"
	"strings"
	"unicode"
)

// Section is a group of the rendered context.
type Section string

// Sections, in the order they are rendered.
const (
	Warnings    Section = "warnings"    // lessons from negative outcomes
	Preferences Section = "preferences" // what the user or team likes
	Decisions   Section = "decisions"   // choices made
	Lessons     Section = "lessons"     // lessons without a negative outcome
	Facts       Section = "facts"       // everything else
)

// SectionOrder is the order of sections in the rendered text.
func SectionOrder() []Section { return []Section{Warnings, Preferences, Decisions, Lessons, Facts} }

var sectionTitles = map[Section]string{
	Warnings: "Warnings", Preferences: "Preferences", Decisions: "Decisions", Lessons: "Lessons", Facts: "Facts",
}

// Title is the section's heading in the rendered text.
func (s Section) Title() string { return sectionTitles[s] }

// Memory is what Classify looks at.
type Memory struct {
	Content  string
	Concepts []string
	Metadata []byte // raw JSON object or nil
	Valence  float64
}

// NegativeValence is the valence at or below which a memory records a bad
// outcome.
const NegativeValence = -0.1

// Classify puts a memory in a section. A metadata "type" or "kind" naming a
// known kind wins; otherwise a negative valence makes a lesson, then the
// wording decides (lesson words such as "lesson", "learned", "mistake";
// preference words such as "prefer", "like", "favourite"; decision words
// such as "decided", "chose", "will"; softer lesson words such as "avoid",
// "never"), else a fact. A lesson with a negative valence is a warning.
func Classify(m Memory) Section {
	s, ok := kindSection(metadataKind(m.Metadata))
	if !ok {
		s = wordSection(m)
	}
	if s == Lessons && m.Valence <= NegativeValence {
		return Warnings
	}
	return s
}

func metadataKind(meta []byte) string {
	if len(meta) == 0 {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	for _, k := range []string{"type", "kind"} {
		// The first that names a section: {"type": "custom", "kind":
		// "warning"} is a warning (the type alone was read, and missed).
		if s, ok := m[k].(string); ok {
			if s = strings.ToLower(strings.TrimSpace(s)); kinds[s] != "" {
				return s
			}
		}
	}
	return ""
}

var kinds = map[string]Section{
	"warning": Warnings, "warnings": Warnings, "pitfall": Warnings, "caution": Warnings,
	"preference": Preferences, "preferences": Preferences, "pref": Preferences, "like": Preferences,
	"decision": Decisions, "decisions": Decisions, "choice": Decisions, "adr": Decisions,
	"lesson": Lessons, "lessons": Lessons, "learning": Lessons, "mistake": Lessons, "postmortem": Lessons,
	"fact": Facts, "facts": Facts, "note": Facts, "info": Facts, "knowledge": Facts,
}

func kindSection(kind string) (Section, bool) {
	s, ok := kinds[kind]
	return s, ok
}

var (
	strongLessonWords = words("lesson lessons learned learnt learning mistake mistakes postmortem post-mortem")
	preferenceWords   = words("prefer prefers preferred preference preferences like likes liked favourite favorite favourites favorites love loves dislike dislikes hate hates rather")
	decisionWords     = words("decided decide decides decision decisions chose chosen choose agreed adopt adopted settled will going")
	softLessonWords   = words("avoid avoided never pitfall gotcha caution careful beware broke broken outage failed failure regret")
)

func words(s string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func wordSection(m Memory) Section {
	if m.Valence <= NegativeValence {
		return Lessons
	}
	toks := wordsOf(m.Content)
	for _, c := range m.Concepts {
		toks = append(toks, strings.ToLower(c))
	}
	for _, class := range []struct {
		set map[string]bool
		sec Section
	}{
		{strongLessonWords, Lessons},
		{preferenceWords, Preferences},
		{decisionWords, Decisions},
		{softLessonWords, Lessons},
	} {
		for _, w := range toks {
			if class.set[w] {
				return class.sec
			}
		}
	}
	return Facts
}

func wordsOf(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '-'
	})
}
