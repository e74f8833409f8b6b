package middleware

import (
	"net/http"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// newBasicAuth checks RFC 7617 Basic credentials against c.Users and
// c.UsersFile ("user:hash" lines, hashes as in passwordHash; the file wins
// for a user listed in both). A failure answers 401 with
// WWW-Authenticate: Basic realm="<realm>" (default "traefik"). On success
// c.HeaderField, when set, carries the user name to the backend, and
// c.RemoveHeader removes Authorization. A missing usersFile, a line
// without ":" or an unsupported hash is an error naming it.
// Source: https://doc.traefik.io/traefik/middlewares/http/basicauth/
func newBasicAuth(c *config.BasicAuth) (Middleware, error) {
	entries, err := loadAuthEntries(c.Users, c.UsersFile)
	if err != nil {
		return nil, err
	}
	users := map[string]passwordHash{}
	for _, e := range entries {
		u, h, ok := strings.Cut(e.line, ":")
		if !ok || u == "" {
			return nil, errField(e.field, "want user:hash")
		}
		if err := checkHashFormat(h); err != nil {
			return nil, errField(e.field, "user %s: %w", u, err)
		}
		users[u] = passwordHash(h)
	}
	realm := c.Realm
	if realm == "" {
		realm = defaultRealm
	}
	challenge := `Basic realm="` + strings.ReplaceAll(realm, `"`, `\"`) + `"`
	headerField, remove := http.CanonicalHeaderKey(c.HeaderField), c.RemoveHeader
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if ok {
			h, known := users[user]
			ok = known && h.match(pass)
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "401 Unauthorized", http.StatusUnauthorized)
			return
		}
		if headerField != "" {
			r.Header.Set(headerField, user)
		}
		if remove {
			r.Header.Del("Authorization")
		}
		next.ServeHTTP(w, r)
	}), nil
}
