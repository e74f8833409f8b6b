package middleware

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// newRedirectScheme redirects to c.Scheme (and c.Port; default ports are
// omitted from the Location) when the URL the client used differs from
// the target. The client's scheme comes from the connection and from a
// trusted X-Forwarded-Proto (see requestScheme), so a TLS-terminating load
// balancer in front causes no redirect loop and WebSocket requests get a
// plain https:// Location (case 027).
// Source: https://doc.traefik.io/traefik/middlewares/http/redirectscheme/
func newRedirectScheme(c *config.RedirectScheme) (Middleware, error) {
	if c.Scheme == "" {
		return nil, &fieldError{Field: "scheme", Err: errors.New("empty; want a target scheme such as https")}
	}
	scheme := strings.ToLower(c.Scheme)
	if c.Port != "" {
		if p, err := strconv.Atoi(c.Port); err != nil || p < 1 || p > 65535 {
			return nil, errField("port", "%q is not a port number", c.Port)
		}
	}
	port := ""
	if !defaultPort(scheme, c.Port) {
		port = ":" + c.Port
	}
	permanent := c.Permanent
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		cur := requestScheme(r)
		host, hostPort := splitHostPort(r.Host)
		curPort := ""
		if !defaultPort(cur, hostPort) {
			curPort = ":" + hostPort
		}
		if cur == scheme && curPort == port {
			next.ServeHTTP(w, r)
			return
		}
		redirect(w, r, scheme+"://"+host+port+requestURI(r), permanent)
	}), nil
}
