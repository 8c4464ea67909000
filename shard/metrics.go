package shard

import (
	"io"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics of the shard layer, registered on the default registry.
var (
	applyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hebb_shard_apply_duration_seconds",
		Help:    "Time to apply one Raft entry to a group's state machine.",
		Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12),
	}, []string{"group"})
	proposeBatch = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hebb_shard_propose_batch_commands",
		Help:    "Commands carried by one Raft entry sent by a group's proposer (group commit).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 9),
	}, []string{"group"})
	snapshotsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hebb_shard_snapshots_total",
		Help: "Snapshots persisted, by group and result.",
	}, []string{"group", "result"})
	snapshotBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hebb_shard_snapshot_size_bytes",
		Help: "Size of the group's last persisted snapshot.",
	}, []string{"group"})
)

func init() {
	prometheus.MustRegister(applyDuration, proposeBatch, snapshotsTotal, snapshotBytes)
}

func groupLabel(id uint32) string { return strconv.FormatUint(uint64(id), 10) }

// countingWriter counts the bytes of a snapshot as they are written.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
