package middleware

import (
	"net/http"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// newEncodedCharacters answers 400 to requests whose path (as sent, before
// decoding) holds one of the percent-encoded characters that can change
// how a backend splits or interprets it, unless c allows it: %2F (/), %5C
// (\), %00 (NUL), %3B (;), %25 (%), %3F (?) and %23 (#).
// Source: https://doc.traefik.io/traefik/middlewares/http/encodedcharacters/
func newEncodedCharacters(c *config.EncodedCharacters) (Middleware, error) {
	var deny []string
	add := func(allowed bool, code string) {
		if !allowed {
			deny = append(deny, code)
		}
	}
	add(c.AllowEncodedSlash, "2F")
	add(c.AllowEncodedBackSlash, "5C")
	add(c.AllowEncodedNullCharacter, "00")
	add(c.AllowEncodedSemicolon, "3B")
	add(c.AllowEncodedPercent, "25")
	add(c.AllowEncodedQuestionMark, "3F")
	add(c.AllowEncodedHash, "23")
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		p := r.RequestURI
		if i := strings.IndexByte(p, '?'); i >= 0 {
			p = p[:i]
		}
		if p == "" {
			p = r.URL.EscapedPath()
		}
		for i := 0; i+2 < len(p); i++ {
			if p[i] != '%' {
				continue
			}
			code := strings.ToUpper(p[i+1 : i+3])
			for _, d := range deny {
				if code == d {
					http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	}), nil
}
