package cluster

import "maps"

// Node states recorded in the meta group by an operator's drain.
const (
	NodeDraining = "draining"
	NodeLeft     = "left"
)

// SetNodeState records a node as draining (its replicas move away) or left
// (drained and removed). Result: nil.
type SetNodeState struct {
	NodeID string `json:"node_id"`
	State  string `json:"state"`
}

// EncodeSetNodeState encodes a SetNodeState command.
func EncodeSetNodeState(c SetNodeState) []byte { return encodeCommand(cmdSetNodeState, c) }

func (st *metaState) setNodeState(c SetNodeState) any {
	if st.nodes == nil {
		st.nodes = map[string]string{}
	}
	if c.State == "" {
		delete(st.nodes, c.NodeID)
		return nil
	}
	st.nodes[c.NodeID] = c.State
	return nil
}

// DrainingNodes returns the nodes being drained or already gone.
func (m *Meta) DrainingNodes() map[string]bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string]bool, len(m.st.nodes))
	for id := range m.st.nodes {
		out[id] = true
	}
	return out
}

// NodeState returns the recorded state of a node ("" when none).
func (m *Meta) NodeState(id string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.st.nodes[id]
}

func cloneNodes(n map[string]string) map[string]string {
	if len(n) == 0 {
		return nil
	}
	return maps.Clone(n)
}
