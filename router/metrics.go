package router

import (
	"strconv"
	"time"

	frouter "github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Metrics of the HTTP surface, registered on the default registry.
var (
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hebb_http_request_duration_seconds",
		Help:    "Latency of HTTP requests by route, method and status.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18),
	}, []string{"route", "method", "status"})
	embedDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "hebb_embedder_duration_seconds",
		Help:    "Time to embed one request's texts.",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2, 18),
	})
	searchDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "hebb_search_kernel_duration_seconds",
		Help:    "Time of the in-group search of one read (scan, ranking, diversity).",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2, 18),
	})
	quotaRejections = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hebb_quota_rejections_total",
		Help: "Requests refused with 429, by reason.",
	}, []string{"reason"})
)

func init() {
	prometheus.MustRegister(requestDuration, embedDuration, searchDuration, quotaRejections)
}

// MetricsHandler serves the default registry in the Prometheus text format.
func MetricsHandler() fasthttp.RequestHandler {
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.Handler())
}

// observe wraps the whole router to time every request by its route pattern.
func observe(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		next(ctx)
		route, _ := ctx.UserValue(frouter.MatchedRoutePathParam).(string)
		if route == "" {
			route = "unmatched"
		}
		requestDuration.WithLabelValues(route, methodLabel(ctx.Method()), strconv.Itoa(ctx.Response.StatusCode())).
			Observe(time.Since(start).Seconds())
	}
}

// methodLabel is the method's label: one of HTTP's methods, or "other". A
// label is a series kept until the process ends, and a client picks the
// method: a thousand made-up ones of 8 KB grew /metrics to 177 MB.
func methodLabel(m []byte) string {
	switch string(m) {
	case fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodPost, fasthttp.MethodPut, fasthttp.MethodPatch,
		fasthttp.MethodDelete, fasthttp.MethodOptions, fasthttp.MethodConnect, fasthttp.MethodTrace:
		return string(m)
	}
	return "other"
}
