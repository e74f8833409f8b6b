package ingressnginx

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	netv1 "k8s.io/api/networking/v1"
)

// Limits on what an Ingress's author controls.
const (
	// maxValueBytes bounds one annotation value.
	maxValueBytes = 4096
	// maxListItems bounds a comma-separated annotation list.
	maxListItems = 64
	// maxShownValue is how much of a value a verdict repeats.
	maxShownValue = 120
)

// Verdict is how Gantry serves one annotation of one Ingress.
type Verdict struct {
	// Annotation is the name without Prefix ("rewrite-target").
	Annotation string  `json:"annotation"`
	Value      string  `json:"value,omitempty"`
	Support    Support `json:"support"`
	// Detail says how it is approximated or why it is refused, for this
	// Ingress's value.
	Detail string `json:"detail,omitempty"`
	// Critical: refused, and the Ingress's paths answer 503 because of it.
	Critical bool `json:"critical,omitempty"`
}

// settings are an Ingress's parsed annotations.
type settings struct {
	verdicts map[string]*Verdict
	// denied is why the Ingress's paths answer 503 ("" when served).
	denied string

	canary                            bool
	canaryHeader, canaryHeaderValue   string
	canaryHeaderPattern, canaryCookie string
	canaryWeight, canaryWeightTotal   int

	useRegex      bool
	rewriteTarget string // Go replacement syntax; "" none
	rawRewrite    string
	appRoot       string

	sslRedirect      *bool
	forceSSLRedirect bool

	scheme    string // http, https or h2c
	insecure  bool   // https without verification
	timeouts  timeouts
	vhost     string
	aliases   []string
	bodyLimit *int64

	authURL, authSignin, authRedirectParam string
	authResponseHeaders                    []string
	authType, authSecret, authSecretType   string
	authRealm                              string

	allowRanges []string

	affinity bool
	cookie   cookieSettings

	cors *corsSettings

	limitRPS, limitRPM, limitConnections int
	burstMultiplier                      int

	customHeaders   string
	responseHeaders map[string]string // resolved custom-headers
	users           []string          // resolved auth-secret

	redirectURL       string
	redirectPermanent bool
}

type timeouts struct{ connect, read, send int }

type cookieSettings struct {
	name, path, domain, sameSite string
	secure                       bool
	maxAge                       int
}

type corsSettings struct {
	origins, originRegex, methods, headers, expose []string
	credentials                                    bool
	maxAge                                         int
}

// parseSettings reads the nginx.ingress.kubernetes.io/ annotations of ing.
// Every annotation present gets a Verdict; a bad value is refused with the
// error, and a refused critical one denies the Ingress's paths.
func parseSettings(ing *netv1.Ingress) *settings {
	s := &settings{verdicts: map[string]*Verdict{}, scheme: "http", burstMultiplier: 5, canaryWeightTotal: 100}
	a := ing.Annotations
	get := func(name string) (string, bool) {
		v, ok := a[Prefix+name]
		if !ok {
			return "", false
		}
		if vd := s.verdicts[name]; vd == nil || vd.Support == Refused {
			return "", false
		}
		return strings.TrimSpace(v), true
	}
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if !strings.HasPrefix(k, Prefix) {
			continue
		}
		row := Lookup(k)
		v := &Verdict{Annotation: row.Name, Value: shown(a[k]), Support: row.Support, Detail: row.Note}
		s.verdicts[row.Name] = v
		if len(a[k]) > maxValueBytes {
			s.refuse(row.Name, "value is %d bytes, over the %d-byte limit", len(a[k]), maxValueBytes)
		} else if !utf8.ValidString(a[k]) {
			s.refuse(row.Name, "value is not valid UTF-8")
		}
		if row.Support == Refused && row.Critical {
			s.deny(row.Name, row.Note)
		}
	}
	s.parseCanary(get)
	if s.canary {
		// A canary Ingress inherits everything else from its main Ingress.
		for name, v := range s.verdicts {
			if !strings.HasPrefix(name, "canary") && v.Support != Refused {
				v.Detail = "ignored on a canary Ingress: the main Ingress's annotations apply"
			}
		}
		return s
	}
	s.parseRouting(get)
	s.parseBackend(get)
	s.parseAuth(get)
	s.parseAccess(get)
	s.parseAffinity(get)
	s.parseCORS(get)
	s.parseLimits(get)
	return s
}

// shown shortens a value for a verdict.
func shown(v string) string {
	v = strings.ToValidUTF8(v, "?")
	if len(v) > maxShownValue {
		cut := maxShownValue
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return v[:cut] + "…"
	}
	return v
}

// refuse marks annotation name refused with a reason; a critical one also
// denies the Ingress.
func (s *settings) refuse(name, format string, args ...any) {
	v := s.verdicts[name]
	if v == nil {
		return
	}
	v.Support = Refused
	v.Detail = fmt.Sprintf(format, args...)
	if tableByName[name].Critical {
		s.deny(name, v.Detail)
	}
}

func (s *settings) deny(name, why string) {
	s.verdicts[name].Critical = true
	if s.denied == "" {
		s.denied = fmt.Sprintf("annotation %s%s: %s", Prefix, name, why)
	}
}

// approximate marks annotation name approximated with a detail.
func (s *settings) approximate(name, format string, args ...any) {
	if v := s.verdicts[name]; v != nil {
		v.Support = Approximated
		v.Detail = fmt.Sprintf(format, args...)
	}
}

type getter func(name string) (string, bool)

// parseBool accepts what ingress-nginx's parser does (strconv.ParseBool).
func (s *settings) parseBool(get getter, name string) (val, ok bool) {
	v, ok := get(name)
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		s.refuse(name, "%q is not true or false", v)
		return false, false
	}
	return b, true
}

// parseInt reads a whole number in [lo, hi].
func (s *settings) parseInt(get getter, name string, lo, hi int) (int, bool) {
	v, ok := get(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		s.refuse(name, "%q is not a whole number from %d to %d", v, lo, hi)
		return 0, false
	}
	return n, true
}

// parseList splits a comma-separated list, dropping empty items.
func (s *settings) parseList(get getter, name string) ([]string, bool) {
	v, ok := get(name)
	if !ok {
		return nil, false
	}
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	if len(out) > maxListItems {
		s.refuse(name, "%d items, over the %d-item limit", len(out), maxListItems)
		return nil, false
	}
	return out, true
}

func (s *settings) parseCanary(get getter) {
	s.canary, _ = s.parseBool(get, "canary")
	if !s.canary {
		for _, n := range []string{"canary-by-header", "canary-by-header-value", "canary-by-header-pattern", "canary-by-cookie", "canary-weight", "canary-weight-total"} {
			if s.verdicts[n] != nil && s.verdicts[n].Support != Refused {
				s.verdicts[n].Detail = "ignored: the Ingress is not a canary (canary: \"true\" is missing)"
			}
		}
		return
	}
	s.parseMatching(get, "canary-by-header", headerName, "a header name", &s.canaryHeader)
	s.parseText(get, "canary-by-header-value", "`\r\n", "a backtick or a line break", &s.canaryHeaderValue)
	var pattern string
	if s.parseText(get, "canary-by-header-pattern", "`\r\n", "a backtick or a line break", &pattern) {
		if _, err := regexp.Compile(pattern); err != nil {
			s.refuse("canary-by-header-pattern", "not a Go regular expression: %v", err)
		} else {
			s.canaryHeaderPattern = pattern
		}
	}
	s.parseMatching(get, "canary-by-cookie", cookieName, "a cookie name", &s.canaryCookie)
	if n, ok := s.parseInt(get, "canary-weight-total", 1, 1_000_000); ok {
		s.canaryWeightTotal = n
	}
	if n, ok := s.parseInt(get, "canary-weight", 0, 1_000_000); ok {
		s.canaryWeight = min(n, s.canaryWeightTotal)
	}
}

var (
	headerName = lazy(`^[A-Za-z0-9!#$%&'*+.^_|~-]{1,128}$`)
	cookieName = lazy(`^[A-Za-z0-9!#$%&'*+.^_|~-]{1,128}$`)
	// targetVar finds nginx variables in a rewrite target.
	targetVar = lazy(`\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9])`)
	groupRef  = lazy(`\$\{[0-9]\}`)
	hostName  = lazy(`^(\*\.)?[a-z0-9]([a-z0-9-]{0,62})?(\.[a-z0-9]([a-z0-9-]{0,62})?)*$`)
)

func (s *settings) parseRouting(get getter) {
	s.useRegex, _ = s.parseBool(get, "use-regex")
	if v, ok := get("rewrite-target"); ok {
		repl, err := nginxReplacement(v)
		if err != nil {
			s.refuse("rewrite-target", "%v", err)
		} else {
			s.rewriteTarget, s.rawRewrite = repl, v
		}
	}
	if v, ok := get("app-root"); ok {
		if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \t\r\n\"$") {
			s.refuse("app-root", "%q is not an absolute path", v)
		} else {
			s.appRoot = v
		}
	}
	if b, ok := s.parseBool(get, "ssl-redirect"); ok {
		s.sslRedirect = &b
	}
	s.forceSSLRedirect, _ = s.parseBool(get, "force-ssl-redirect")
	if l, ok := s.parseList(get, "server-alias"); ok {
		for _, h := range l {
			h = strings.ToLower(strings.TrimSuffix(h, "."))
			if !hostName.MatchString(h) || len(h) > 253 {
				s.refuse("server-alias", "%q is not a host name", h)
				s.aliases = nil
				break
			}
			s.aliases = append(s.aliases, h)
		}
	}
	code := 301
	if n, ok := s.parseInt(get, "permanent-redirect-code", 300, 308); ok {
		code = n
	}
	if v, ok := get("permanent-redirect"); ok {
		if err := checkURL(v); err != nil {
			s.refuse("permanent-redirect", "%v", err)
		} else {
			s.redirectURL, s.redirectPermanent = v, true
			if code != 301 && code != 308 {
				s.approximate("permanent-redirect-code", "%d is sent as 301 for GET and HEAD, 308 for other methods", code)
			}
		}
	}
	if v, ok := get("temporal-redirect"); ok {
		if err := checkURL(v); err != nil {
			s.refuse("temporal-redirect", "%v", err)
		} else {
			// ingress-nginx: temporal-redirect takes precedence.
			s.redirectURL, s.redirectPermanent = v, false
		}
	}
}

// parseMatching sets *dst to the value of annotation name when re
// matches it, else refuses it as not what ("a header name").
func (s *settings) parseMatching(get getter, name string, re *lazyRegexp, what string, dst *string) {
	if v, ok := get(name); ok {
		if !re.MatchString(v) {
			s.refuse(name, "%q is not "+what, v)
		} else {
			*dst = v
		}
	}
}

// parseText sets *dst to the value of annotation name unless it holds
// one of the characters of forbidden (what names them in the refusal). ok
// reports whether *dst was set.
func (s *settings) parseText(get getter, name, forbidden, what string, dst *string) (ok bool) {
	v, ok := get(name)
	if !ok {
		return false
	}
	if strings.ContainsAny(v, forbidden) {
		s.refuse(name, "%q contains %s", shown(v), what)
		return false
	}
	*dst = v
	return true
}

// checkURL accepts an absolute redirect target without nginx variables.
func checkURL(v string) error {
	if strings.ContainsAny(v, " \t\r\n\"") {
		return fmt.Errorf("%q contains white space or a quote", shown(v))
	}
	if strings.Contains(v, "$") {
		return fmt.Errorf("%q uses nginx variables, which Gantry does not expand", shown(v))
	}
	if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "/") {
		return fmt.Errorf("%q is not an http(s) URL or an absolute path", shown(v))
	}
	return nil
}

// nginxReplacement turns a rewrite target into a Go regexp replacement:
// $1..$9 become ${1}..${9}; other nginx variables are refused, as is a
// query string (nginx's rewrite would replace the arguments).
func nginxReplacement(v string) (string, error) {
	if strings.ContainsAny(v, " \t\r\n\"{};") {
		return "", fmt.Errorf("%q contains white space, a quote, a brace or a semicolon", shown(v))
	}
	if strings.Contains(v, "?") {
		return "", fmt.Errorf("%q has a query string, which Gantry does not rewrite", shown(v))
	}
	if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
		return "", fmt.Errorf("%q is a URL: nginx redirects there, use permanent-redirect or temporal-redirect", shown(v))
	}
	var err error
	out := targetVar.ReplaceAllStringFunc(v, func(m string) string {
		if len(m) == 2 && m[1] >= '0' && m[1] <= '9' {
			return "${" + m[1:] + "}"
		}
		if err == nil {
			err = fmt.Errorf("%q uses the nginx variable %s, which Gantry does not expand", shown(v), m)
		}
		return m
	})
	if err != nil {
		return "", err
	}
	if strings.Contains(groupRef.ReplaceAllString(out, ""), "$") {
		return "", fmt.Errorf("%q has a stray $", shown(v))
	}
	return out, nil
}

func (s *settings) parseBackend(get getter) {
	if v, ok := get("backend-protocol"); ok {
		switch strings.ToUpper(v) {
		case "HTTP":
		case "HTTPS", "GRPCS":
			s.scheme, s.insecure = "https", true
		case "GRPC":
			s.scheme = "h2c"
		default:
			s.refuse("backend-protocol", "%q is not served by Gantry (HTTP, HTTPS, GRPC or GRPCS)", v)
		}
	}
	for _, t := range []struct {
		name string
		dst  *int
	}{{"proxy-connect-timeout", &s.timeouts.connect}, {"proxy-read-timeout", &s.timeouts.read}, {"proxy-send-timeout", &s.timeouts.send}} {
		if n, ok := s.parseInt(get, t.name, 1, 86400); ok {
			*t.dst = n
		}
	}
	if v, ok := get("upstream-vhost"); ok {
		h := strings.ToLower(v)
		if strings.Contains(v, "$") {
			s.refuse("upstream-vhost", "%q uses nginx variables, which Gantry does not expand", v)
		} else if hp, err := netip.ParseAddrPort(h); err == nil {
			s.vhost = hp.String()
		} else if hostPort.MatchString(h) {
			s.vhost = v
		} else {
			s.refuse("upstream-vhost", "%q is not a host name", v)
		}
	}
	if v, ok := get("proxy-body-size"); ok {
		n, err := nginxSize(v)
		if err != nil {
			s.refuse("proxy-body-size", "%v", err)
		} else {
			s.bodyLimit = &n
		}
	}
}

var hostPort = lazy(`^[a-z0-9]([a-z0-9.-]{0,252})?(:[0-9]{1,5})?$`)

// nginxSize parses an nginx size ("8m", "512k", "1g", "100"), in bytes.
// Source: https://nginx.org/en/docs/syntax.html
func nginxSize(v string) (int64, error) {
	m := sizeRe.FindStringSubmatch(v)
	if m == nil {
		return 0, fmt.Errorf("%q is not an nginx size (a number with k, m or g)", shown(v))
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", v, err)
	}
	mul := map[string]int64{"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[strings.ToLower(m[2])]
	if n > (1<<62)/mul {
		return 0, fmt.Errorf("%q is too large", v)
	}
	return n * mul, nil
}

var sizeRe = lazy(`^([0-9]{1,18})([kKmMgG]?)$`)
