package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// spans counts the spans received over OTLP since start.
var spans atomic.Int64

// serveOTLP is the local OTLP/HTTP receiver of the tracing runs: POST
// /v1/traces (protobuf, optionally gzip) is decoded and its spans counted,
// answered 200 with an empty ExportTraceServiceResponse; GET /spans prints
// the count so far (run.sh reads it before and after a run to check what
// was exported).
func serveOTLP(l net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = http.MaxBytesReader(w, r.Body, 64<<20)
		if r.Header.Get("Content-Encoding") == "gzip" {
			z, err := gzip.NewReader(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = z
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := 0
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n += len(ss.Spans)
			}
		}
		spans.Add(int64(n))
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	mux.HandleFunc("GET /spans", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, spans.Load())
	})
	_ = http.Serve(l, mux)
}
