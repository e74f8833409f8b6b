package dataplane

import (
	"bufio"
	"net"
	"net/http"

	"github.com/gantry-proxy/gantry/dataplane/middleware"
)

// attemptWriter tells the retry middleware's Attempt, when the proxy
// writes its own error answer, whether the connection to the server never
// opened (a dial error: no byte of the request reached the server), the
// one network error a retry may repeat (Traefik v3.7, case 040).
type attemptWriter struct {
	http.ResponseWriter
	a  *middleware.Attempt
	pw *proxyWriter
}

func (w *attemptWriter) WriteHeader(code int) {
	if w.pw != nil && w.pw.err != nil && isDialError(w.pw.err) {
		w.a.NothingSent()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *attemptWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *attemptWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *attemptWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
