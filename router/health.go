package router

type healthJSON struct {
	Status   string `json:"status"`
	Database bool   `json:"database"`
	Version  string `json:"version"`
}

func (s *Server) health(c *call) error {
	return s.ok(c, healthJSON{Status: "ok", Database: false, Version: Version})
}

type readyJSON struct {
	Ready   bool            `json:"ready"`
	Checks  map[string]bool `json:"checks"`
	Version string          `json:"version"`
}

// ready reports readiness in the body; the status is always 200.
func (s *Server) ready(c *call) error {
	st := s.backend.Status()
	checks := map[string]bool{
		"database":  st.MetaLeader && st.GroupsWithLeader == st.Groups && st.StorageFailing == 0,
		"engine":    st.GroupsWithLeader == st.Groups && st.Replaying == 0,
		"embedding": s.emb != nil,
	}
	ready := true
	for _, ok := range checks {
		ready = ready && ok
	}
	return s.ok(c, readyJSON{Ready: ready, Checks: checks, Version: Version})
}
