// Package replay holds what the handlers that may answer a request a
// second time share: the errors middleware (an error page instead of the
// answer), the retry middleware (another try) and the failover service
// (the fallback). Writer holds an answer back until its status is known
// and drops it when that status is caught; ReadBody keeps a bounded copy
// of the request body to send again.
package replay

import (
	"bytes"
	"io"
	"net/http"
)

// Writer passes an answer through to the client's writer unless catch
// reports true for its final status; then the headers and body are
// dropped and Caught reports true. Headers stay in Writer's own map until
// the status is known. Informational answers (1xx other than 101) are
// forwarded to the client when pass1xx is set (the retry middleware), and
// dropped otherwise (the errors middleware and the failover service, as
// Traefik's do). Not safe for concurrent use, like any ResponseWriter.
type Writer struct {
	w       http.ResponseWriter
	header  http.Header
	catch   func(code int) bool
	code    int
	pass1xx bool
	wrote   bool
	caught  bool
}

// NewWriter returns a Writer over w (see Init).
func NewWriter(w http.ResponseWriter, catch func(code int) bool, pass1xx bool) *Writer {
	c := new(Writer)
	c.Init(w, catch, pass1xx)
	return c
}

// Init makes c a fresh Writer over w, for a Writer embedded in another
// writer (one allocation for both).
func (c *Writer) Init(w http.ResponseWriter, catch func(code int) bool, pass1xx bool) {
	*c = Writer{w: w, header: http.Header{}, catch: catch, pass1xx: pass1xx}
}

// Caught reports whether the answer's status was caught (and dropped).
func (c *Writer) Caught() bool { return c.caught }

// Code is the final status written, 0 before one is.
func (c *Writer) Code() int { return c.code }

// Header is the client's header map once the answer is passed through,
// Writer's own before (and after a caught status).
func (c *Writer) Header() http.Header {
	if c.wrote && !c.caught {
		return c.w.Header()
	}
	return c.header
}

// WriteHeader decides on the first final status: caught, or passed
// through with the headers set so far.
func (c *Writer) WriteHeader(code int) {
	if c.wrote {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		if c.pass1xx {
			c.w.WriteHeader(code)
		}
		return
	}
	c.wrote, c.code = true, code
	if c.catch(code) {
		c.caught = true
		return
	}
	c.Handoff().WriteHeader(code)
}

// Write writes the header (200) first when needed; a caught answer's body
// is counted as written and dropped.
func (c *Writer) Write(b []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	if c.caught {
		return len(b), nil
	}
	return c.w.Write(b)
}

// Flush writes the header (200) first when needed and flushes the client's
// writer unless the answer was caught.
func (c *Writer) Flush() {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	if !c.caught {
		_ = http.NewResponseController(c.w).Flush()
	}
}

// Unwrap exposes the client's writer (hijacking for upgrades, deadlines)
// for http.ResponseController.
func (c *Writer) Unwrap() http.ResponseWriter { return c.w }

// Handoff copies the headers held so far to the client's writer and
// returns it: for passing the answer through, or for a handler taking the
// connection over.
func (c *Writer) Handoff() http.ResponseWriter {
	dst := c.w.Header()
	for k, v := range c.header {
		dst[k] = v
	}
	return c.w
}

// ReadBody reads body up to limit bytes (limit < 0: all of it) to send it
// again. When that was the whole body, rest is nil and kept holds it;
// else kept is nil and rest reads the bytes read followed by the
// remainder, once (closing rest closes body). err is body's read error.
func ReadBody(body io.ReadCloser, limit int64) (kept []byte, rest io.ReadCloser, err error) {
	var b bytes.Buffer
	src := io.Reader(body)
	if limit >= 0 {
		src = io.LimitReader(body, limit+1)
	}
	n, err := b.ReadFrom(src)
	if err != nil {
		return nil, nil, err
	}
	if limit >= 0 && n > limit {
		return nil, struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b.Bytes()), body), body}, nil
	}
	return b.Bytes(), nil, nil
}
