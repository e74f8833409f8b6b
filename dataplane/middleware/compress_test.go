package middleware

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

func decode(t *testing.T, enc string, b []byte) string {
	t.Helper()
	var r io.Reader
	var err error
	switch enc {
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(b))
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "zstd":
		var d *zstd.Decoder
		d, err = zstd.NewReader(bytes.NewReader(b))
		if err == nil {
			defer d.Close()
			r = d
		}
	default:
		return string(b)
	}
	if err != nil {
		t.Fatalf("%s reader: %v", enc, err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s decode: %v", enc, err)
	}
	return string(out)
}

func TestCompress(t *testing.T) {
	big := strings.Repeat("hello gantry ", 200)
	backend := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/small":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "tiny")
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			_, _ = io.WriteString(w, big)
		case "/encoded":
			w.Header().Set("Content-Encoding", "identity-custom")
			_, _ = io.WriteString(w, big)
		case "/grpc":
			w.Header().Set("Content-Type", "application/grpc")
			_, _ = io.WriteString(w, big)
		case "/untyped":
			_, _ = io.WriteString(w, "<html><body>"+big+"</body></html>")
		default:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Content-Length", "2600")
			_, _ = io.WriteString(w, big)
		}
	}))
	res := resolverFrom(t, `
http:
  middlewares:
    c:    {compress: {excludedContentTypes: ["image/png"]}}
    inc:  {compress: {includedContentTypes: ["text/html"], encodings: [gzip, br]}}
    def:  {compress: {defaultEncoding: gzip, encodings: [br, gzip]}}
    min:  {compress: {minResponseBodyBytes: 5000}}
`)
	c := front(t, res, backend.URL, "c")
	inc := front(t, res, backend.URL, "inc")
	def := front(t, res, backend.URL, "def")
	minS := front(t, res, backend.URL, "min")
	tests := []struct {
		name, srv, path string
		accept          []string // nil: no header
		wantEnc         string
	}{
		{"gzip", c.URL, "/", []string{"gzip"}, "gzip"},
		{"br", c.URL, "/", []string{"br"}, "br"},
		{"zstd", c.URL, "/", []string{"zstd"}, "zstd"},
		{"priority zstd first", c.URL, "/", []string{"gzip, br, zstd"}, "zstd"},
		{"q-values", c.URL, "/", []string{"gzip;q=1.0, br;q=0.5, zstd;q=0"}, "gzip"},
		{"wildcard means br", c.URL, "/", []string{"*"}, "br"},
		{"no header", c.URL, "/", nil, ""},
		{"empty header", c.URL, "/", []string{""}, ""},
		{"identity only", c.URL, "/", []string{"identity"}, ""},
		{"small body", c.URL, "/small", []string{"gzip"}, ""},
		{"excluded type", c.URL, "/image", []string{"gzip"}, ""},
		{"already encoded", c.URL, "/encoded", []string{"gzip"}, "identity-custom"},
		{"grpc never", c.URL, "/grpc", []string{"gzip"}, ""},
		{"sniffed html", c.URL, "/untyped", []string{"gzip"}, "gzip"},
		{"included html", inc.URL, "/untyped", []string{"br"}, "br"},
		{"included: text/plain not listed", inc.URL, "/", []string{"gzip"}, ""},
		{"default encoding without header", def.URL, "/", nil, "gzip"},
		{"default encoding for wildcard", def.URL, "/", []string{"*"}, "gzip"},
		{"configured order", def.URL, "/", []string{"gzip, br"}, "br"},
		{"min bytes", minS.URL, "/", []string{"gzip"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, http.MethodGet, tt.srv+tt.path, nil, func(r *http.Request) {
				for _, a := range tt.accept {
					r.Header.Add("Accept-Encoding", a)
				}
			})
			if got := resp.Header.Get("Content-Encoding"); got != tt.wantEnc {
				t.Fatalf("Content-Encoding %q, want %q", got, tt.wantEnc)
			}
			plain := decode(t, tt.wantEnc, []byte(body))
			if !strings.Contains(plain, "hello gantry") && plain != "tiny" {
				t.Errorf("body %q…", plain[:min(len(plain), 40)])
			}
			if tt.wantEnc != "" && tt.wantEnc != "identity-custom" {
				if resp.Header.Get("Vary") != "Accept-Encoding" || resp.Header.Get("Content-Length") == "2600" {
					t.Errorf("headers %v", resp.Header)
				}
			}
		})
	}
	if resp, _ := do(t, http.MethodGet, c.URL+"/untyped", nil, withHeader("Accept-Encoding", "gzip")); !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("sniffed Content-Type %q, want text/html (from the plain bytes)", resp.Header.Get("Content-Type"))
	}
}

// SSE through the proxy: every event reaches the client, compressed,
// before the backend writes the next one.
func TestCompressFlushesSSEPerEvent(t *testing.T) {
	next := make(chan struct{})
	backend := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			_, _ = io.WriteString(w, "data: event "+string(rune('0'+i))+"\n\n")
			w.(http.Flusher).Flush()
			<-next
		}
	}))
	res := resolverFrom(t, "http:\n  middlewares:\n    c: {compress: {}}\n")
	srv := front(t, res, backend.URL, "c")
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/events", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(zr)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil || line != "data: event "+string(rune('0'+i))+"\n" {
			t.Fatalf("event %d: %q, %v", i, line, err)
		}
		_, _ = br.ReadString('\n')
		next <- struct{}{} // only now does the backend write the next event
	}
}

func TestCompressNegotiateAndBadConfig(t *testing.T) {
	cp := &compressor{encodings: defaultEncodings}
	for h, want := range map[string]string{
		"gzip;q=0.5, br;q=0.8": "br",
		"GZIP":                 "gzip",
		"*;q=0.1, gzip;q=0.05": "br",
		"*, zstd;q=0":          "br",
		"deflate":              "",
	} {
		if got := cp.negotiate([]string{h}); got != want {
			t.Errorf("negotiate(%q) = %q, want %q", h, got, want)
		}
	}
	for yml, want := range map[string]string{
		`{compress: {excludedContentTypes: [a/b], includedContentTypes: [c/d]}}`: "mutually exclusive",
		`{compress: {encodings: [gzip, lzma]}}`:                                  "compress.encodings[1]",
		`{compress: {encodings: [gzip], defaultEncoding: br}}`:                   "compress.defaultEncoding",
		`{compress: {minResponseBodyBytes: -1}}`:                                 "compress.minResponseBodyBytes",
	} {
		if err := buildErr(t, "http:\n  middlewares:\n    m: "+yml+"\n", "m"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", yml, err, want)
		}
	}
}
