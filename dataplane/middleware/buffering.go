package middleware

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/gantry-proxy/gantry/config"
)

// defaultMemBodyBytes is how much of a body Buffering keeps in memory
// before spilling to a temporary file (Traefik's default, 1 MiB).
const defaultMemBodyBytes = 1 << 20

// newBuffering reads the whole request body before calling the next
// handler, and the whole response before sending it. Bodies larger than
// maxRequestBodyBytes get 413; responses larger than maxResponseBodyBytes
// get 500 (0: no limit). Up to mem*BodyBytes (default 1 MiB) stay in
// memory, the rest goes to a temporary file removed at the end. With
// retryExpression (expr syntax over Attempts(), ResponseCode() and
// IsNetworkError() — 502 or 504 from the proxy), the buffered request is
// sent again while the expression holds for the last response.
// Upgrade requests pass through unbuffered.
// Source: https://doc.traefik.io/traefik/middlewares/http/buffering/
func newBuffering(c *config.Buffering) (Middleware, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{{"maxRequestBodyBytes", c.MaxRequestBodyBytes}, {"memRequestBodyBytes", c.MemRequestBodyBytes}, {"maxResponseBodyBytes", c.MaxResponseBodyBytes}, {"memResponseBodyBytes", c.MemResponseBodyBytes}} {
		if f.v < 0 {
			return nil, errField(f.name, "%d is negative", f.v)
		}
	}
	b := &buffering{maxReq: c.MaxRequestBodyBytes, memReq: c.MemRequestBodyBytes, maxResp: c.MaxResponseBodyBytes, memResp: c.MemResponseBodyBytes}
	if b.memReq == 0 {
		b.memReq = defaultMemBodyBytes
	}
	if b.memResp == 0 {
		b.memResp = defaultMemBodyBytes
	}
	if c.RetryExpression != "" {
		p, err := expr.Compile(c.RetryExpression, expr.Env(retryEnv{}), expr.AsBool())
		if err != nil {
			return nil, errField("retryExpression", "%q: %w", c.RetryExpression, err)
		}
		b.retry = p
	}
	return b.wrap, nil
}

type buffering struct {
	maxReq, memReq, maxResp, memResp int64
	retry                            *vm.Program
}

// retryEnv is the environment of a buffering retryExpression.
type retryEnv struct {
	attempts, code int
}

// Attempts is the number of tries made so far.
func (e retryEnv) Attempts() int { return e.attempts }

// ResponseCode is the status of the last try.
func (e retryEnv) ResponseCode() int { return e.code }

// IsNetworkError reports whether the last try failed to reach a backend.
func (e retryEnv) IsNetworkError() bool {
	return e.code == http.StatusBadGateway || e.code == http.StatusGatewayTimeout
}

func (b *buffering) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r)
			return
		}
		if b.maxReq > 0 && r.ContentLength > b.maxReq {
			http.Error(w, http.StatusText(http.StatusRequestEntityTooLarge), http.StatusRequestEntityTooLarge)
			return
		}
		var reqBody *spillBuffer
		if r.Body != nil && r.Body != http.NoBody {
			reqBody = &spillBuffer{max: b.maxReq, mem: b.memReq}
			defer reqBody.Close()
			_, err := io.Copy(reqBody, r.Body)
			if errors.Is(err, errSpillFull) {
				http.Error(w, http.StatusText(http.StatusRequestEntityTooLarge), http.StatusRequestEntityTooLarge)
				return
			}
			if err != nil {
				http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
				return
			}
		}
		for attempt := 1; ; attempt++ {
			req := r
			if reqBody != nil {
				rd, err := reqBody.Reader()
				if err != nil {
					http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
					return
				}
				req = r.Clone(r.Context())
				req.Body = io.NopCloser(rd)
				req.ContentLength = reqBody.n
				req.TransferEncoding = nil
				req.Header.Set("Content-Length", strconv.FormatInt(reqBody.n, 10))
			}
			resp := &bufferedResponse{header: http.Header{}, body: &spillBuffer{max: b.maxResp, mem: b.memResp}}
			next.ServeHTTP(resp, req)
			if b.retry != nil {
				ok, err := expr.Run(b.retry, retryEnv{attempts: attempt, code: resp.status()})
				if err == nil && ok.(bool) {
					resp.body.Close()
					continue
				}
			}
			resp.send(w)
			return
		}
	})
}

// bufferedResponse holds a whole response.
type bufferedResponse struct {
	header http.Header
	code   int
	body   *spillBuffer
	tooBig bool
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.code == 0 && (code < 100 || code >= 200) {
		b.code = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.code == 0 {
		b.code = http.StatusOK
	}
	if b.tooBig {
		return len(p), nil
	}
	n, err := b.body.Write(p)
	if errors.Is(err, errSpillFull) {
		// Swallow the rest: an error here would make the proxy abort the
		// connection instead of letting send answer 500.
		b.tooBig = true
		return len(p), nil
	}
	return n, err
}

func (b *bufferedResponse) status() int {
	if b.code == 0 {
		return http.StatusOK
	}
	return b.code
}

// send writes the buffered response to w with its exact Content-Length.
func (b *bufferedResponse) send(w http.ResponseWriter) {
	defer b.body.Close()
	if b.tooBig {
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	rd, err := b.body.Reader()
	if err != nil {
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	dst := w.Header()
	for k, v := range b.header {
		dst[k] = v
	}
	dst.Del("Transfer-Encoding")
	if b.body.n > 0 || dst.Get("Content-Length") != "" {
		dst.Set("Content-Length", strconv.FormatInt(b.body.n, 10))
	}
	w.WriteHeader(b.status())
	_, _ = io.Copy(w, rd)
}

var errSpillFull = errors.New("body larger than the configured maximum")

// spillBuffer keeps up to mem bytes in memory and the rest in a temporary
// file; writes past max bytes (0: no limit) fail with errSpillFull.
type spillBuffer struct {
	max, mem int64
	n        int64
	buf      bytes.Buffer
	file     *os.File
}

func (s *spillBuffer) Write(p []byte) (int, error) {
	if s.max > 0 && s.n+int64(len(p)) > s.max {
		return 0, errSpillFull
	}
	s.n += int64(len(p))
	if s.file == nil && int64(s.buf.Len()+len(p)) <= s.mem {
		return s.buf.Write(p)
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "gantry-buffer-*")
		if err != nil {
			return 0, fmt.Errorf("buffering: %w", err)
		}
		s.file = f
	}
	return s.file.Write(p)
}

// Reader returns a reader over everything written, from the start.
func (s *spillBuffer) Reader() (io.Reader, error) {
	mem := bytes.NewReader(s.buf.Bytes())
	if s.file == nil {
		return mem, nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.MultiReader(mem, s.file), nil
}

// Close removes the temporary file, if any.
func (s *spillBuffer) Close() {
	if s.file != nil {
		_ = s.file.Close()
		_ = os.Remove(s.file.Name())
		s.file = nil
	}
}

// Flush does nothing: the response is sent whole once complete.
func (b *bufferedResponse) Flush() {}
