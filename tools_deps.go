//go:build tools

package hebb

import (
	_ "github.com/bytedance/sonic"
	_ "github.com/fasthttp/router"
	_ "github.com/google/uuid"
	_ "github.com/hashicorp/go-metrics"
	_ "github.com/hashicorp/memberlist"
	_ "github.com/hashicorp/raft"
	_ "github.com/hashicorp/raft-boltdb/v2"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/valyala/fasthttp"
	_ "github.com/viterin/vek"
)
