package raftfsm

// HopRowCap bounds the edges one hop of a graph walk may return.
const HopRowCap = 250

// GraphRequest is a bounded breadth-first read of the association graph.
type GraphRequest struct {
	Tenant    string
	Seeds     []string
	Depth     int
	MinWeight float64
	Limit     int
}

// GraphResult holds copies of the returned edges in walk order.
type GraphResult struct {
	Edges     []Edge
	Truncated bool
}

// Graph walks up to Depth hops from the seeds over edges of weight at least
// MinWeight, strongest first, at most HopRowCap edges per hop and Limit in all.
func (f *FSM) Graph(req *GraphRequest) GraphResult {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[req.Tenant]
	if t == nil {
		return GraphResult{Edges: []Edge{}}
	}
	return t.edges.walk(req)
}

// walk is Graph over one tenant's edges. A concept's edges are read in
// neighbours order and those already taken skipped; the walk stops at the
// first untaken edge past the hop's or the request's budget. So it reads
// no more than budget+1 untaken edges of a concept, and since the taken
// ones number len(res.Edges), the best budget+1+len(res.Edges) of its
// edges hold every edge the walk reads: neighbours selects those instead of
// sorting a hub's whole adjacency.
func (s *edgeSet) walk(req *GraphRequest) GraphResult {
	res := GraphResult{Edges: []Edge{}}
	seen := make(map[*edgeRec]bool)
	visited := make(map[string]bool)
	frontier := make([]string, 0, len(req.Seeds))
	for _, c := range req.Seeds {
		if !visited[c] {
			visited[c] = true
			frontier = append(frontier, c)
		}
	}
	for hop := 0; hop < req.Depth && len(frontier) > 0; hop++ {
		var next []string
		taken := 0
	walk:
		for _, c := range frontier {
			budget := HopRowCap - taken
			if req.Limit >= 0 {
				budget = min(budget, req.Limit-len(res.Edges))
			}
			for _, e := range s.neighbours(c, req.MinWeight, max(budget, 0)+1+len(res.Edges)) {
				if seen[e] {
					continue
				}
				if taken == HopRowCap || len(res.Edges) == req.Limit {
					res.Truncated = true
					break walk
				}
				seen[e] = true
				taken++
				ed := s.edge(e)
				res.Edges = append(res.Edges, ed)
				for _, o := range [2]string{ed.A, ed.B} {
					if !visited[o] {
						visited[o] = true
						next = append(next, o)
					}
				}
			}
		}
		frontier = next
	}
	return res
}
