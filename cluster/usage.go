package cluster

import "maps"

// usageDay is the daily query count of every org for one UTC day. Nodes
// add what they counted through AddUsage, so the count is cluster-wide.
type usageDay struct {
	Day    string           `json:"day"` // YYYY-MM-DD, UTC
	Counts map[string]int64 `json:"counts"`
}

func (u usageDay) clone() *usageDay {
	if u.Day == "" {
		return nil
	}
	return &usageDay{Day: u.Day, Counts: maps.Clone(u.Counts)}
}

// AddUsage adds query counts of one UTC day. A later day replaces the
// recorded one (counts restart at midnight); an earlier day is ignored.
// Result: nil.
type AddUsage struct {
	Day    string           `json:"day"`
	Counts map[string]int64 `json:"counts"`
}

// EncodeAddUsage encodes an AddUsage command.
func EncodeAddUsage(c AddUsage) []byte { return encodeCommand(cmdAddUsage, c) }

func (st *metaState) addUsage(c AddUsage) any {
	switch {
	case c.Day < st.usage.Day:
		return nil
	case c.Day > st.usage.Day:
		st.usage = usageDay{Day: c.Day, Counts: make(map[string]int64)}
	}
	for org, n := range c.Counts {
		if n > 0 {
			st.usage.Counts[org] += n
		}
	}
	return nil
}

// Usage returns org's recorded query count of day (YYYY-MM-DD, UTC).
func (m *Meta) Usage(orgID, day string) int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.st.usage.Day != day {
		return 0
	}
	return m.st.usage.Counts[orgID]
}
