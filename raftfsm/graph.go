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
	res := GraphResult{Edges: []Edge{}}
	t := f.tenants[req.Tenant]
	if t == nil {
		return res
	}
	seen := make(map[*edgeRec]bool)
	visited := make(map[string]bool)
	frontier := make([]string, 0, len(req.Seeds))
	for _, s := range req.Seeds {
		if !visited[s] {
			visited[s] = true
			frontier = append(frontier, s)
		}
	}
	for hop := 0; hop < req.Depth && len(frontier) > 0; hop++ {
		var next []string
		taken := 0
	walk:
		for _, c := range frontier {
			for _, e := range t.edges.neighbours(c, req.MinWeight, 0) {
				if seen[e] {
					continue
				}
				if taken == HopRowCap || len(res.Edges) == req.Limit {
					res.Truncated = true
					break walk
				}
				seen[e] = true
				taken++
				ed := t.edges.edge(e)
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
