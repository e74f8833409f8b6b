package middleware

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/gantry-proxy/gantry/config"
)

// Compress defaults (Traefik v3).
const defaultMinResponseBodyBytes = 1024

var defaultEncodings = []string{"zstd", "br", "gzip"}

// newCompress compresses responses with the best encoding the client
// accepts (Accept-Encoding q-values; ties go to the first of c.Encodings,
// default zstd, br, gzip). A request without Accept-Encoding gets
// c.DefaultEncoding (when set); "*" stands for c.DefaultEncoding, else br
// when allowed, else the first encoding; an empty Accept-Encoding disables
// compression. Requests whose own Content-Type is excluded (gRPC always
// is) get uncompressed responses. A response is compressed when it has no Content-Encoding,
// is not a 206/204/304 or an upgrade, its Content-Type passes
// excludedContentTypes / includedContentTypes (gRPC never does), and its
// body reaches c.MinResponseBodyBytes (default 1024) — or the handler
// flushes first: a streamed response (SSE) is compressed at once and every
// Flush flushes the encoder, so each event still reaches the client.
// Source: https://doc.traefik.io/traefik/middlewares/http/compress/
func newCompress(c *config.Compress) (Middleware, error) {
	if len(c.IncludedContentTypes) > 0 && len(c.ExcludedContentTypes) > 0 {
		return nil, errField("includedContentTypes", "excludedContentTypes and includedContentTypes are mutually exclusive")
	}
	cp := &compressor{min: c.MinResponseBodyBytes}
	if cp.min < 0 {
		return nil, errField("minResponseBodyBytes", "%d is negative", cp.min)
	}
	if cp.min == 0 {
		cp.min = defaultMinResponseBodyBytes
	}
	var err error
	if cp.excluded, err = parseMediaTypes(c.ExcludedContentTypes, "excludedContentTypes"); err != nil {
		return nil, err
	}
	if cp.included, err = parseMediaTypes(c.IncludedContentTypes, "includedContentTypes"); err != nil {
		return nil, err
	}
	cp.encodings = defaultEncodings
	if len(c.Encodings) > 0 {
		cp.encodings = nil
		for i, e := range c.Encodings {
			e = strings.ToLower(strings.TrimSpace(e))
			if !slices.Contains(defaultEncodings, e) {
				return nil, errField(fmt.Sprintf("encodings[%d]", i), "%q is not one of zstd, br, gzip", e)
			}
			cp.encodings = append(cp.encodings, e)
		}
	}
	if d := strings.ToLower(c.DefaultEncoding); d != "" {
		if !slices.Contains(cp.encodings, d) {
			return nil, errField("defaultEncoding", "%q is not one of the encodings %v", c.DefaultEncoding, cp.encodings)
		}
		cp.def = d
	}
	return cp.wrap, nil
}

type compressor struct {
	min       int
	excluded  []string
	included  []string
	encodings []string
	def       string
}

func parseMediaTypes(list []string, field string) ([]string, error) {
	var out []string
	for i, s := range list {
		mt, _, err := mime.ParseMediaType(s)
		if err != nil {
			return nil, errField(fmt.Sprintf("%s[%d]", field, i), "%q: %w", s, err)
		}
		out = append(out, mt)
	}
	return out, nil
}

// allowed reports whether a response of content type ct may be compressed.
func (cp *compressor) allowed(ct string) bool {
	mt := ""
	if ct != "" {
		if m, _, err := mime.ParseMediaType(ct); err == nil {
			mt = m
		}
	}
	if strings.HasPrefix(mt, "application/grpc") {
		return false
	}
	if len(cp.included) > 0 {
		return slices.Contains(cp.included, mt)
	}
	return !slices.Contains(cp.excluded, mt)
}

// excludedRequest reports whether the request's own Content-Type is
// gRPC or excluded (Traefik: so that event-stream requests, for one, get
// plain responses).
func (cp *compressor) excludedRequest(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "application/grpc") || slices.Contains(cp.excluded, mt)
}

// negotiate picks the encoding for an Accept-Encoding header ("" for none).
func (cp *compressor) negotiate(h []string) string {
	if h == nil {
		return cp.def
	}
	best, bestQ, wildQ := "", 0.0, -1.0
	q := map[string]float64{}
	for _, line := range h {
		for part := range strings.SplitSeq(line, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			v := 1.0
			if p, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
				f, err := strconv.ParseFloat(p, 64)
				if err != nil {
					continue
				}
				v = f
			}
			if name == "*" {
				wildQ = v
				continue
			}
			q[name] = v
		}
	}
	viaWild := false
	for _, e := range cp.encodings {
		v, listed := q[e]
		w := false
		if !listed {
			v, w = wildQ, true
		}
		if v > bestQ {
			best, bestQ, viaWild = e, v, w
		}
	}
	if viaWild {
		// "*" means the default encoding: defaultEncoding, else br when
		// allowed, else the first encoding (Traefik's choice).
		switch {
		case cp.def != "":
			return cp.def
		case slices.Contains(cp.encodings, "br"):
			return "br"
		}
		return cp.encodings[0]
	}
	return best
}

func (cp *compressor) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := cp.negotiate(r.Header.Values("Accept-Encoding"))
		if enc == "" || r.Header.Get("Upgrade") != "" || r.Method == http.MethodHead || cp.excludedRequest(r) {
			next.ServeHTTP(w, r)
			return
		}
		cw := &compressWriter{rw: w, cp: cp, enc: enc}
		next.ServeHTTP(cw, r)
		cw.finish() // not deferred: after a panic (aborted response) nothing more is written
	})
}

// compressWriter buffers up to cp.min bytes, then decides to compress or
// to pass the response through.
type compressWriter struct {
	rw      http.ResponseWriter
	cp      *compressor
	enc     string
	code    int
	buf     []byte
	decided bool
	w       encoder // nil: passing through
}

type encoder interface {
	io.WriteCloser
	Flush() error
	Reset(io.Writer)
}

func (c *compressWriter) Header() http.Header { return c.rw.Header() }

func (c *compressWriter) WriteHeader(code int) {
	if c.decided || c.code != 0 {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		c.rw.WriteHeader(code)
		return
	}
	c.code = code
	h := c.rw.Header()
	switch {
	case code == http.StatusSwitchingProtocols, code == http.StatusNoContent, code == http.StatusNotModified,
		code == http.StatusPartialContent, h.Get("Content-Encoding") != "", h.Get("Content-Range") != "":
		c.passThrough()
	case h.Get("Content-Length") != "":
		if n, err := strconv.Atoi(h.Get("Content-Length")); err == nil && n < c.cp.min {
			c.passThrough()
		}
	}
}

func (c *compressWriter) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.decided {
		if c.w != nil {
			return c.w.Write(b)
		}
		return c.rw.Write(b)
	}
	c.buf = append(c.buf, b...)
	if len(c.buf) >= c.cp.min {
		if err := c.decide(); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// decide starts compressing when the content type allows it, else passes
// through; either way it writes the header and the buffered bytes.
func (c *compressWriter) decide() error {
	h := c.rw.Header()
	ct, hasCT := h["Content-Type"]
	if !hasCT && len(c.buf) > 0 {
		// Sniff now: net/http would otherwise sniff the compressed bytes.
		h.Set("Content-Type", http.DetectContentType(c.buf))
		ct = h["Content-Type"]
	}
	first := ""
	if len(ct) > 0 {
		first = ct[0]
	}
	if !c.cp.allowed(first) {
		c.passThrough()
		return nil
	}
	c.decided = true
	h.Del("Content-Length")
	h.Set("Content-Encoding", c.enc)
	h.Add("Vary", "Accept-Encoding")
	c.rw.WriteHeader(c.code)
	c.w = getEncoder(c.enc, c.rw)
	buf := c.buf
	c.buf = nil
	_, err := c.w.Write(buf)
	return err
}

func (c *compressWriter) passThrough() {
	c.decided = true
	code := c.code
	if code == 0 {
		code = http.StatusOK
	}
	c.rw.WriteHeader(code)
	if len(c.buf) > 0 {
		_, _ = c.rw.Write(c.buf)
		c.buf = nil
	}
}

// Flush sends what was written so far: an undecided response is decided
// now (compressed when its type allows, so a stream stays compressed).
func (c *compressWriter) Flush() {
	if c.code == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.decided {
		_ = c.decide()
	}
	if c.w != nil {
		_ = c.w.Flush()
	}
	_ = http.NewResponseController(c.rw).Flush()
}

// Unwrap exposes the client's writer (deadlines, hijacking for upgrades).
func (c *compressWriter) Unwrap() http.ResponseWriter { return c.rw }

// finish completes the response after the handler returned.
func (c *compressWriter) finish() {
	if !c.decided {
		if c.code == 0 && len(c.buf) == 0 {
			return // the handler wrote nothing; net/http sends 200
		}
		c.passThrough()
		return
	}
	if c.w != nil {
		_ = c.w.Close()
		putEncoder(c.enc, c.w)
		c.w = nil
	}
}

var encoderPools = map[string]*sync.Pool{
	"gzip": {New: func() any { return gzip.NewWriter(io.Discard) }},
	"br":   {New: func() any { return brotli.NewWriterLevel(io.Discard, brotli.DefaultCompression) }},
	"zstd": {New: func() any {
		// These options are constants that NewWriter accepts: no error.
		z, _ := zstd.NewWriter(io.Discard, zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		return z
	}},
}

func getEncoder(name string, w io.Writer) encoder {
	e := encoderPools[name].Get().(encoder)
	e.Reset(w)
	return e
}

func putEncoder(name string, e encoder) {
	e.Reset(io.Discard)
	encoderPools[name].Put(e)
}
