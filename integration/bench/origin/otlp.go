package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"
)

// spans counts the spans received over OTLP since start.
var spans atomic.Int64

// serveOTLP is the local OTLP/HTTP receiver of the tracing runs: POST
// /v1/traces (protobuf, optionally gzip) has its spans counted (countSpans)
// and is answered 200 with an empty ExportTraceServiceResponse (zero bytes
// of protobuf); GET /spans prints the count so far (run.sh reads it before
// and after a run to check what was exported).
//
// It stands for a collector on another machine, so it costs the shared
// origin CPU as little as it can: the spans are counted by walking the
// wire format, not decoded into messages. A receiver that answered slowly
// made Gantry's 2 048-span queue overflow and drop (not encode) spans,
// which made tracing look cheaper than it is.
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
		n, err := countSpans(b)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		spans.Add(int64(n))
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /spans", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, spans.Load())
	})
	_ = http.Serve(l, mux)
}

// countSpans counts the spans of an ExportTraceServiceRequest in protobuf
// wire format (opentelemetry-proto collector/trace/v1): field 1 of the
// request is a ResourceSpans, field 2 of that a ScopeSpans, field 2 of that
// a Span. Other fields are skipped; a malformed message is an error.
func countSpans(req []byte) (int, error) {
	n := 0
	err := eachField(req, 1, func(rs []byte) error {
		return eachField(rs, 2, func(ss []byte) error {
			return eachField(ss, 2, func([]byte) error { n++; return nil })
		})
	})
	return n, err
}

// eachField calls fn with the bytes of every length-delimited field num of
// message b, in order, and skips every other field.
func eachField(b []byte, num protowire.Number, fn func([]byte) error) error {
	for len(b) > 0 {
		f, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return fmt.Errorf("otlp: bad tag: %w", protowire.ParseError(l))
		}
		b = b[l:]
		if f == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return fmt.Errorf("otlp: field %d: %w", f, protowire.ParseError(l))
			}
			if err := fn(v); err != nil {
				return err
			}
			b = b[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(f, typ, b)
		if l < 0 {
			return fmt.Errorf("otlp: field %d: %w", f, protowire.ParseError(l))
		}
		b = b[l:]
	}
	return nil
}
