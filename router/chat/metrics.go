package chat

import "github.com/prometheus/client_golang/prometheus"

var (
	realtimeConnections = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hebb_chat_realtime_connections",
		Help: "Open realtime (WebSocket) connections of the chat surface.",
	})
	realtimeEvents = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hebb_chat_realtime_events_sent_total",
		Help: "Room events sent over realtime connections.",
	})
)

func init() {
	prometheus.MustRegister(realtimeConnections, realtimeEvents)
}
