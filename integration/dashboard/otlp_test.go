package dashboard

import (
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// serveOTLPGRPC runs a gRPC collector on a free loopback port, its
// services registered by register, and returns its address. It stops when
// t ends, after the Gantry the test starts later (cleanups run last
// first), so Gantry's last export on shutdown still finds it.
func serveOTLPGRPC(t *testing.T, register func(*grpc.Server)) net.Addr {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr()
}

// readOTLPExport decodes an OTLP/HTTP export posted to path (protobuf,
// gzip when Content-Encoding says so, at most 16 MiB) into req. A bad one
// is answered 400 and ok is false; gzipped says whether the body was.
func readOTLPExport(w http.ResponseWriter, r *http.Request, path string, req proto.Message) (gzipped, ok bool) {
	var body io.Reader = io.LimitReader(r.Body, 16<<20)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false, false
		}
		body, gzipped = zr, true
	}
	raw, err := io.ReadAll(body)
	if err != nil || r.URL.Path != path {
		http.Error(w, "bad export", http.StatusBadRequest)
		return gzipped, false
	}
	if err := proto.Unmarshal(raw, req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return gzipped, false
	}
	return gzipped, true
}

// writeOTLPResponse answers an OTLP/HTTP export with resp in protobuf.
func writeOTLPResponse(w http.ResponseWriter, resp proto.Message) {
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}
