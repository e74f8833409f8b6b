package middleware

import (
	"bufio"
	"net"
	"net/http"
)

// responseHook edits response headers (and may replace the status code)
// just before the final status line is written.
type responseHook interface {
	beforeHeader(h http.Header, code int) int
}

// hookFunc adapts a function to responseHook.
type hookFunc func(h http.Header, code int) int

func (f hookFunc) beforeHeader(h http.Header, code int) int { return f(h, code) }

// hookWriter calls hook once, just before the final status line is
// written (explicitly or by the first Write), so a middleware can edit the
// response headers or replace the status code. Informational responses
// (1xx other than 101) pass through untouched. It keeps Flush working and
// exposes the underlying writer through Unwrap for http.ResponseController
// (hijacking for upgrades, deadlines).
type hookWriter struct {
	http.ResponseWriter
	hook     responseHook
	wrote    bool
	hijacked bool
}

// WriteHeader runs the hook on the first final status.
func (w *hookWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(w.hook.beforeHeader(w.ResponseWriter.Header(), code))
}

// Write writes the header (200) first when needed.
func (w *hookWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush writes the header when needed and flushes the underlying writer.
func (w *hookWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer (for http.ResponseController).
func (w *hookWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack hands the connection over (protocol upgrades); the hook does not
// run for a hijacked response.
func (w *hookWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// finish runs the hook for a handler that returned without writing
// anything, so that the implicit 200 carries the edited headers too.
func (w *hookWriter) finish() {
	if !w.wrote && !w.hijacked {
		w.WriteHeader(http.StatusOK)
	}
}
