package cluster

import (
	"strconv"
	"sync"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// groupCollector reports every running cluster's groups: leader, term,
// commit and applied index. One collector serves every Cluster of the
// process (tests run several), keyed by node.
type groupCollector struct {
	mu       sync.Mutex
	clusters map[*Cluster]bool
}

var (
	collector = &groupCollector{clusters: make(map[*Cluster]bool)}
	descs     = map[string]*prometheus.Desc{
		"leader":  prometheus.NewDesc("hebb_raft_leader", "1 when this node leads the group.", []string{"node", "group"}, nil),
		"term":    prometheus.NewDesc("hebb_raft_term", "Current Raft term of the group.", []string{"node", "group"}, nil),
		"commit":  prometheus.NewDesc("hebb_raft_commit_index", "Commit index of the group.", []string{"node", "group"}, nil),
		"applied": prometheus.NewDesc("hebb_raft_applied_index", "Index of the last command applied to the state machine.", []string{"node", "group"}, nil),
	}
)

var forwarded = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "hebb_cluster_forwarded_requests_total",
	Help: "Requests this node forwarded to another node, by kind.",
}, []string{"kind"})

func init() { prometheus.MustRegister(collector, forwarded) }

func (g *groupCollector) add(c *Cluster) {
	g.mu.Lock()
	g.clusters[c] = true
	g.mu.Unlock()
}

func (g *groupCollector) remove(c *Cluster) {
	g.mu.Lock()
	delete(g.clusters, c)
	g.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (g *groupCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (g *groupCollector) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.clusters {
		for _, grp := range c.node.Groups() {
			r := grp.Raft()
			labels := []string{c.cfg.NodeID, strconv.FormatUint(uint64(grp.ID()), 10)}
			leader := 0.0
			if r.State() == raft.Leader {
				leader = 1
			}
			ch <- prometheus.MustNewConstMetric(descs["leader"], prometheus.GaugeValue, leader, labels...)
			ch <- prometheus.MustNewConstMetric(descs["term"], prometheus.GaugeValue, float64(r.CurrentTerm()), labels...)
			ch <- prometheus.MustNewConstMetric(descs["commit"], prometheus.GaugeValue, float64(r.CommitIndex()), labels...)
			ch <- prometheus.MustNewConstMetric(descs["applied"], prometheus.GaugeValue, float64(grp.AppliedIndex()), labels...)
		}
	}
}
