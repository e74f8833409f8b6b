package ingressnginx

import (
	"net/netip"
	"net/url"
	"regexp"
	"strings"
)

func (s *settings) parseAuth(get getter) {
	if v, ok := get("auth-url"); ok {
		u, err := url.Parse(v)
		switch {
		case err != nil:
			s.refuse("auth-url", "not a URL: %v", err)
		case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
			s.refuse("auth-url", "%q is not an http(s) URL", shown(v))
		case strings.Contains(v, "$"):
			s.refuse("auth-url", "%q uses nginx variables, which Gantry does not expand", shown(v))
		default:
			s.authURL = v
		}
	}
	if l, ok := s.parseList(get, "auth-response-headers"); ok {
		for _, h := range l {
			if !headerName.MatchString(h) {
				s.refuse("auth-response-headers", "%q is not a header name", h)
				l = nil
				break
			}
		}
		s.authResponseHeaders = l
	}
	s.parseMatching(get, "auth-signin-redirect-param", queryParam, "a query parameter name", &s.authRedirectParam)
	if v, ok := get("auth-signin"); ok {
		u, err := url.Parse(v)
		switch {
		case err != nil:
			s.refuse("auth-signin", "not a URL: %v", err)
		case strings.Contains(v, "$") || strings.ContainsAny(v, " \t\r\n\"") || u.Fragment != "":
			s.refuse("auth-signin", "%q uses nginx variables, white space or a fragment", shown(v))
		case u.Scheme != "http" && u.Scheme != "https" && !strings.HasPrefix(v, "/"):
			s.refuse("auth-signin", "%q is not an http(s) URL or an absolute path", shown(v))
		case s.authURL == "":
			s.refuse("auth-signin", "ignored without a usable auth-url")
		default:
			s.authSignin = v
		}
	}
	if v, ok := get("auth-type"); ok {
		switch v {
		case "basic", "digest":
			s.authType = v
		default:
			s.refuse("auth-type", "%q is not basic or digest", v)
		}
	}
	if v, ok := get("auth-secret"); ok {
		s.authSecret = v
	} else if s.authType != "" && s.verdicts["auth-secret"] == nil {
		s.refuse("auth-type", "auth-secret is missing")
	}
	s.authSecretType = "auth-file"
	if v, ok := get("auth-secret-type"); ok {
		if v != "auth-file" && v != "auth-map" {
			s.refuse("auth-secret-type", "%q is not auth-file or auth-map", v)
			if s.authType != "" {
				s.refuse("auth-type", "auth-secret-type is refused")
			}
		} else {
			s.authSecretType = v
		}
	}
	s.parseText(get, "auth-realm", "\"\\\r\n", "a quote, a backslash or a line break", &s.authRealm)
}

var queryParam = lazy(`^[A-Za-z0-9_.~-]{1,64}$`)

func (s *settings) parseAccess(get getter) {
	name := "whitelist-source-range"
	if _, ok := get("allowlist-source-range"); ok {
		// ingress-nginx reads allowlist-source-range first.
		name = "allowlist-source-range"
		if v := s.verdicts["whitelist-source-range"]; v != nil && v.Support != Refused {
			v.Detail = "ignored: allowlist-source-range takes precedence"
		}
	}
	l, ok := s.parseList(get, name)
	if !ok {
		return
	}
	if len(l) == 0 {
		s.refuse(name, "empty list")
		return
	}
	for _, r := range l {
		if _, err := netip.ParsePrefix(r); err == nil {
			continue
		}
		if _, err := netip.ParseAddr(r); err == nil {
			continue
		}
		s.refuse(name, "%q is not an IP address or CIDR range", r)
		return
	}
	s.allowRanges = l
}

func (s *settings) parseAffinity(get getter) {
	v, ok := get("affinity")
	if !ok {
		return
	}
	if v != "cookie" {
		s.refuse("affinity", "%q is not cookie, the only affinity ingress-nginx has", v)
		return
	}
	s.affinity = true
	s.cookie.name = "INGRESSCOOKIE"
	s.parseMatching(get, "session-cookie-name", cookieName, "a cookie name", &s.cookie.name)
	if v, ok := get("session-cookie-path"); ok {
		if strings.HasPrefix(v, "/") && !strings.ContainsAny(v, "; \t\r\n") {
			s.cookie.path = v
		} else {
			s.refuse("session-cookie-path", "%q is not a cookie path", v)
		}
	}
	if v, ok := get("session-cookie-domain"); ok {
		if hostName.MatchString(strings.ToLower(strings.TrimPrefix(v, "."))) {
			s.cookie.domain = v
		} else {
			s.refuse("session-cookie-domain", "%q is not a domain", v)
		}
	}
	if v, ok := get("session-cookie-samesite"); ok {
		switch strings.ToLower(v) {
		case "none", "lax", "strict":
			s.cookie.sameSite = strings.ToLower(v)
		default:
			s.refuse("session-cookie-samesite", "%q is not None, Lax or Strict", v)
		}
	}
	s.cookie.secure, _ = s.parseBool(get, "session-cookie-secure")
	if n, ok := s.parseInt(get, "session-cookie-expires", 0, 1<<31-1); ok {
		s.cookie.maxAge = n
	}
	if n, ok := s.parseInt(get, "session-cookie-max-age", 0, 1<<31-1); ok {
		s.cookie.maxAge = n
		if s.verdicts["session-cookie-expires"] != nil && s.verdicts["session-cookie-expires"].Support != Refused {
			s.verdicts["session-cookie-expires"].Detail = "ignored: session-cookie-max-age is set"
		}
	}
}

// corsDefault* are ingress-nginx's defaults.
var (
	corsDefaultMethods = []string{"GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"}
	corsDefaultHeaders = []string{"DNT", "Keep-Alive", "User-Agent", "X-Requested-With", "If-Modified-Since", "Cache-Control", "Content-Type", "Range", "Authorization"}
	corsOrigin         = lazy(`^[a-z][a-z0-9+.-]*://(\*\.)?[A-Za-z0-9.-]+(:[0-9]{1,5})?$`)
	corsMethod         = lazy(`^[A-Za-z]{1,32}$`)
	corsHeader         = lazy(`^[A-Za-z0-9_-]{1,128}$`)
	corsExpose         = lazy(`^(\*|[A-Za-z0-9_-]{1,128})$`)
)

func (s *settings) parseCORS(get getter) {
	if on, _ := s.parseBool(get, "enable-cors"); !on {
		for _, n := range []string{"cors-allow-origin", "cors-allow-methods", "cors-allow-headers", "cors-expose-headers", "cors-allow-credentials", "cors-max-age"} {
			if v := s.verdicts[n]; v != nil && v.Support != Refused {
				v.Detail = "ignored without enable-cors: \"true\""
			}
		}
		return
	}
	c := &corsSettings{methods: corsDefaultMethods, headers: corsDefaultHeaders, credentials: true, maxAge: 1728000}
	if l, ok := s.parseList(get, "cors-allow-origin"); ok {
		for _, o := range l {
			switch {
			case o == "*":
				c.origins = []string{"*"}
			case corsOrigin.MatchString(o) && strings.Contains(o, "://*."):
				scheme, rest, _ := strings.Cut(o, "://*.")
				c.originRegex = append(c.originRegex, "^"+regexp.QuoteMeta(scheme)+`://[A-Za-z0-9-]+\.`+regexp.QuoteMeta(rest)+"$")
			case corsOrigin.MatchString(o):
				c.origins = append(c.origins, o)
			default:
				s.refuse("cors-allow-origin", "%q is not an origin (scheme://host[:port])", o)
				c.origins, c.originRegex = nil, nil
			}
			if c.origins == nil && c.originRegex == nil && s.verdicts["cors-allow-origin"].Support == Refused {
				break
			}
		}
	}
	if len(c.origins) == 0 && len(c.originRegex) == 0 {
		c.origins = []string{"*"}
	}
	for _, f := range []struct {
		name string
		re   *lazyRegexp
		dst  *[]string
	}{{"cors-allow-methods", corsMethod, &c.methods}, {"cors-allow-headers", corsHeader, &c.headers}, {"cors-expose-headers", corsExpose, &c.expose}} {
		l, ok := s.parseList(get, f.name)
		if !ok {
			continue
		}
		good := true
		for _, it := range l {
			if !f.re.MatchString(it) {
				s.refuse(f.name, "%q is not allowed in this list", it)
				good = false
				break
			}
		}
		if good {
			*f.dst = l
		}
	}
	if b, ok := s.parseBool(get, "cors-allow-credentials"); ok {
		c.credentials = b
	}
	if n, ok := s.parseInt(get, "cors-max-age", 0, 1<<31-1); ok {
		c.maxAge = n
	}
	s.cors = c
}

func (s *settings) parseLimits(get getter) {
	if n, ok := s.parseInt(get, "limit-burst-multiplier", 1, 1000); ok {
		s.burstMultiplier = n
	}
	if n, ok := s.parseInt(get, "limit-rps", 0, 1_000_000); ok {
		s.limitRPS = n
	}
	if n, ok := s.parseInt(get, "limit-rpm", 0, 60_000_000); ok {
		s.limitRPM = n
	}
	if n, ok := s.parseInt(get, "limit-connections", 0, 1_000_000); ok {
		s.limitConnections = n
	}
	if v, ok := get("custom-headers"); ok {
		s.customHeaders = v
	}
}
