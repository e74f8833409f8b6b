package middleware

import (
	"net/http"

	"github.com/gantry-proxy/gantry/config"
)

// newContentType controls Go's Content-Type sniffing of responses that
// carry none. With autoDetect false (Traefik v3's default) a response
// without Content-Type is sent without one; with autoDetect true net/http
// sniffs it from the first 512 bytes (an empty Content-Type entry put
// there to suppress sniffing is removed).
// Source: https://doc.traefik.io/traefik/middlewares/http/contenttype/
func newContentType(c *config.ContentType) (Middleware, error) {
	auto := c.AutoDetect
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		hw := &hookWriter{ResponseWriter: w, hook: hookFunc(func(h http.Header, code int) int {
			v, ok := h["Content-Type"]
			switch {
			case auto && ok && len(v) == 0:
				delete(h, "Content-Type")
			case !auto && !ok:
				h["Content-Type"] = nil
			}
			return code
		})}
		next.ServeHTTP(hw, r)
		hw.finish()
	}), nil
}
