package middleware

import (
	"encoding/base64"
	"encoding/binary"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// newGrpcWeb lets browsers call gRPC services through the gRPC-Web
// protocol (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-WEB.md):
// a request with Content-Type application/grpc-web[-text][+codec] goes to
// the backend as application/grpc[+codec] (the -text body base64-decoded,
// TE: trailers set), and the gRPC response comes back as gRPC-Web, its
// HTTP trailers moved into a final length-prefixed frame with flag 0x80
// (base64-encoded per write for -text; trailer names in sorted order). CORS preflights from origins in
// c.AllowOrigins ("*" for any) are answered with 204, others with 403;
// responses to allowed origins expose the grpc-status and grpc-message
// headers. Other requests pass through unchanged.
// Source: https://doc.traefik.io/traefik/middlewares/http/grpcweb/
func newGrpcWeb(c *config.GrpcWeb) (Middleware, error) {
	g := &grpcWeb{origins: slices.Clone(c.AllowOrigins)}
	return g.wrap, nil
}

type grpcWeb struct{ origins []string }

func (g *grpcWeb) allowed(origin string) bool {
	return slices.Contains(g.origins, "*") || slices.Contains(g.origins, origin)
}

func (g *grpcWeb) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			if !g.allowed(origin) {
				http.Error(w, http.StatusText(http.StatusForbidden), http.StatusForbidden)
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Methods", "POST")
			if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
				h.Set("Access-Control-Allow-Headers", rh)
			}
			h.Set("Access-Control-Max-Age", "600")
			h.Add("Vary", "Origin")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		ct := r.Header.Get("Content-Type")
		rest, isWeb := strings.CutPrefix(ct, "application/grpc-web")
		if !isWeb || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		suffix, text := strings.CutPrefix(rest, "-text")
		r.Header.Set("Content-Type", "application/grpc"+suffix)
		r.Header.Set("Te", "trailers")
		r.Header.Del("X-Grpc-Web")
		if text {
			r.Header.Del("Content-Length")
			r.ContentLength = -1
			r.Body = struct {
				io.Reader
				io.Closer
			}{base64.NewDecoder(base64.StdEncoding, r.Body), r.Body}
		}
		gw := &grpcWebWriter{rw: w, text: text, suffix: suffix}
		if origin != "" && g.allowed(origin) {
			gw.origin = origin
		}
		next.ServeHTTP(gw, r)
		gw.finish()
	})
}

// grpcWebWriter turns a gRPC response into a gRPC-Web one.
type grpcWebWriter struct {
	rw       http.ResponseWriter
	text     bool
	suffix   string
	origin   string
	wrote    bool
	trailers []string // announced trailer names
}

func (g *grpcWebWriter) Header() http.Header { return g.rw.Header() }

func (g *grpcWebWriter) WriteHeader(code int) {
	if g.wrote {
		return
	}
	g.wrote = true
	h := g.rw.Header()
	for _, v := range h.Values("Trailer") {
		for k := range strings.SplitSeq(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				g.trailers = append(g.trailers, http.CanonicalHeaderKey(k))
			}
		}
	}
	h.Del("Trailer")
	h.Del("Content-Length")
	ctype := "application/grpc-web"
	if g.text {
		ctype = "application/grpc-web-text"
	}
	if rest, ok := strings.CutPrefix(h.Get("Content-Type"), "application/grpc"); ok {
		h.Set("Content-Type", ctype+rest)
	} else if h.Get("Content-Type") == "" {
		h.Set("Content-Type", ctype+g.suffix)
	}
	if g.origin != "" {
		h.Set("Access-Control-Allow-Origin", g.origin)
		h.Set("Access-Control-Expose-Headers", "grpc-status,grpc-message,grpc-status-details-bin")
		h.Add("Vary", "Origin")
	}
	g.rw.WriteHeader(code)
}

func (g *grpcWebWriter) Write(b []byte) (int, error) {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	if !g.text {
		return g.rw.Write(b)
	}
	if _, err := g.rw.Write([]byte(base64.StdEncoding.EncodeToString(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (g *grpcWebWriter) Flush() {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(g.rw).Flush()
}

func (g *grpcWebWriter) Unwrap() http.ResponseWriter { return g.rw }

// finish writes the trailers as the final gRPC-Web frame.
func (g *grpcWebWriter) finish() {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	h := g.rw.Header()
	var payload strings.Builder
	add := func(k string, vals []string) {
		for _, v := range vals {
			payload.WriteString(strings.ToLower(k) + ": " + v + "\r\n")
		}
	}
	names := g.trailers
	for k := range h {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names) // a stable frame whatever the map order
	for _, k := range names {
		if v, ok := h[http.TrailerPrefix+k]; ok {
			add(k, v)
			delete(h, http.TrailerPrefix+k)
			continue
		}
		add(k, h.Values(k))
		h.Del(k)
	}
	if payload.Len() == 0 {
		return
	}
	frame := make([]byte, 5, 5+payload.Len())
	frame[0] = 0x80
	binary.BigEndian.PutUint32(frame[1:], uint32(payload.Len()))
	frame = append(frame, payload.String()...)
	_, _ = g.Write(frame)
}
