package ingressnginx

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// Limits on the Secrets and ConfigMaps an annotation names.
const (
	maxUsers         = 10000
	maxCustomHeaders = 100
)

// middlewares declares the middlewares of a served location and returns
// them in the order nginx applies them: the rewrite phase's returns
// (app-root, redirects; CORS preflights), response headers, the body
// limit, the preaccess limits (connections, then rpm, then rps), the
// access checks (source range, then authentication), and last the
// request's Host and path as the backend gets them.
func (t *translator) middlewares(loc *location) []string {
	s := loc.in.s
	var names []string
	add := func(suffix string, m *config.Middleware) {
		n := loc.name + "-" + suffix
		t.conf.HTTP.Middlewares[n] = m
		names = append(names, n)
	}
	if s.appRoot != "" {
		add("app-root", &config.Middleware{RedirectRegex: &config.RedirectRegex{Regex: `^([a-z]+://[^/?]+)/(\?.*)?$`, Replacement: "${1}" + s.appRoot}})
	}
	if s.redirectURL != "" {
		add("redirect", &config.Middleware{RedirectRegex: &config.RedirectRegex{Regex: `^.*$`, Replacement: s.redirectURL, Permanent: s.redirectPermanent}})
	}
	if c := s.cors; c != nil {
		h := &config.Headers{
			AccessControlAllowOriginList:      c.origins,
			AccessControlAllowOriginListRegex: c.originRegex,
			AccessControlAllowMethods:         c.methods,
			AccessControlAllowHeaders:         c.headers,
			AccessControlExposeHeaders:        c.expose,
			AccessControlAllowCredentials:     c.credentials,
			AccessControlMaxAge:               int64(c.maxAge),
		}
		add("cors", &config.Middleware{Headers: h})
	}
	if len(s.responseHeaders) > 0 {
		add("custom-headers", &config.Middleware{Headers: &config.Headers{CustomResponseHeaders: s.responseHeaders}})
	}
	if s.bodyLimit != nil && *s.bodyLimit > 0 {
		add("body-size", &config.Middleware{Buffering: &config.Buffering{MaxRequestBodyBytes: *s.bodyLimit}})
	}
	if s.limitConnections > 0 {
		add("limit-connections", &config.Middleware{InFlightReq: &config.InFlightReq{Amount: int64(s.limitConnections)}})
	}
	if s.limitRPM > 0 {
		add("limit-rpm", &config.Middleware{RateLimit: &config.RateLimit{Average: int64(s.limitRPM), Period: config.Duration(time.Minute), Burst: int64(s.limitRPM * s.burstMultiplier)}})
	}
	if s.limitRPS > 0 {
		add("limit-rps", &config.Middleware{RateLimit: &config.RateLimit{Average: int64(s.limitRPS), Period: config.Duration(time.Second), Burst: int64(s.limitRPS * s.burstMultiplier)}})
	}
	if len(s.allowRanges) > 0 {
		add("allowed-source-range", &config.Middleware{IPAllowList: &config.IPAllowList{SourceRange: s.allowRanges}})
	}
	if s.authURL != "" {
		if s.authSignin != "" {
			t.signin(loc, add)
		}
		add("auth-url", &config.Middleware{ForwardAuth: &config.ForwardAuth{Address: s.authURL, AuthResponseHeaders: s.authResponseHeaders}})
	}
	switch s.authType {
	case "basic":
		add("basic-auth", &config.Middleware{BasicAuth: &config.BasicAuth{Users: s.users, Realm: s.authRealm}})
	case "digest":
		add("digest-auth", &config.Middleware{DigestAuth: &config.DigestAuth{Users: s.users, Realm: s.authRealm}})
	}
	if s.vhost != "" {
		add("upstream-vhost", &config.Middleware{Headers: &config.Headers{CustomRequestHeaders: map[string]string{"Host": s.vhost}}})
	}
	if s.rewriteTarget != "" && s.rawRewrite != loc.path {
		// nginx: rewrite "(?i)<path>" <target> break; the whole URI
		// becomes the target when the path matches anywhere in it.
		add("rewrite-target", &config.Middleware{ReplacePathRegex: &config.ReplacePathRegex{Regex: "(?is)^.*?(?:" + loc.path + ").*$", Replacement: s.rewriteTarget}})
	}
	return names
}

// signin turns a 401 from auth-url into a 302 to auth-signin carrying the
// original URL: an errors middleware fetches the redirect from a service
// whose only middleware answers it.
func (t *translator) signin(loc *location, add func(string, *config.Middleware)) {
	s := loc.in.s
	param := s.authRedirectParam
	if param == "" {
		param = "rd"
	}
	target := s.authSignin
	u, _ := url.Parse(target)
	switch {
	case u.Query().Get(param) != "":
		// ingress-nginx keeps a sign-in URL that already has the parameter.
	case u.RawQuery == "":
		target += "?" + param + "=${1}"
	default:
		target += "&" + param + "=${1}"
	}
	redirect := loc.name + "-auth-signin-redirect"
	t.conf.HTTP.Middlewares[redirect] = &config.Middleware{RedirectRegex: &config.RedirectRegex{Regex: `^[^?]*\?rd=(.*)$`, Replacement: target}}
	svc := loc.name + "-auth-signin"
	t.conf.HTTP.Services[svc] = &config.Service{Middlewares: []string{redirect}, LoadBalancer: &config.ServersLoadBalancer{}}
	add("auth-signin", &config.Middleware{Errors: &config.ErrorPage{
		Status:              []string{"401"},
		StatusRewrites:      map[string]int{"401": http.StatusFound},
		Service:             svc,
		Query:               "/?rd={url}",
		ErrorRequestHeaders: []string{},
	}})
}

// secretRef splits "name" or "namespace/name" and checks the namespace.
func (t *translator) secretRef(in *ingress, v string) (ns, name string, err error) {
	ns, name = in.ing.Namespace, v
	if a, b, ok := strings.Cut(v, "/"); ok {
		ns, name = a, b
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%q is not name or namespace/name", shown(v))
	}
	if ns != in.ing.Namespace && !t.o.AllowCrossNamespaceResources {
		return "", "", fmt.Errorf("%s/%s is in another namespace (allowCrossNamespaceResources is off)", ns, name)
	}
	return ns, name, nil
}

// resolveUsers reads the users of auth-secret once per Ingress; a failure
// refuses the annotation, which denies the Ingress's paths (503): serving
// them without authentication would open them.
func (t *translator) resolveUsers(in *ingress) {
	s := in.s
	users, err := t.users(in)
	if err != nil {
		if s.verdicts["auth-secret"] != nil {
			s.refuse("auth-secret", "%v", err)
		} else {
			s.refuse("auth-type", "%v", err)
		}
		return
	}
	s.users = users
}

var supportedHash = regexp.MustCompile(`^(\$2[aby]\$[0-9]{2}\$|\$apr1\$|\{SHA\})`)

func (t *translator) users(in *ingress) ([]string, error) {
	s := in.s
	if s.authSecret == "" {
		return nil, fmt.Errorf("auth-secret is missing or refused")
	}
	ns, name, err := t.secretRef(in, s.authSecret)
	if err != nil {
		return nil, err
	}
	sec, err := t.cl.Secret(ns, name)
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", ns, name, err)
	}
	if err := k8s.CheckSecret(sec); err != nil {
		return nil, err
	}
	var lines []string
	if s.authSecretType == "auth-map" {
		for _, u := range slices.Sorted(mapsKeys(sec.Data)) {
			lines = append(lines, u+":"+strings.TrimSpace(string(sec.Data[u])))
		}
	} else {
		raw, ok := sec.Data["auth"]
		if !ok {
			return nil, fmt.Errorf("secret %s/%s has no key auth (auth-secret-type auth-file)", ns, name)
		}
		for l := range strings.SplitSeq(string(raw), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("secret %s/%s has no users", ns, name)
	}
	if len(lines) > maxUsers {
		return nil, fmt.Errorf("secret %s/%s has %d users, over the %d limit", ns, name, len(lines), maxUsers)
	}
	for i, l := range lines {
		parts := strings.Split(l, ":")
		if s.authType == "digest" {
			if len(parts) != 3 || parts[0] == "" || len(parts[2]) != 32 {
				return nil, fmt.Errorf("secret %s/%s user %d is not an htdigest line (user:realm:md5)", ns, name, i+1)
			}
			continue
		}
		if len(parts) != 2 || parts[0] == "" || !supportedHash.MatchString(parts[1]) {
			return nil, fmt.Errorf("secret %s/%s user %d is not user:hash with a bcrypt, APR1/MD5 or SHA1 hash", ns, name, i+1)
		}
	}
	return lines, nil
}

// customHeaders reads the ConfigMap of custom-headers; a failure refuses
// the annotation (the Ingress is served without it).
func (t *translator) customHeaders(in *ingress) map[string]string {
	s := in.s
	fail := func(format string, args ...any) map[string]string {
		s.refuse("custom-headers", format, args...)
		return nil
	}
	a, b, ok := strings.Cut(s.customHeaders, "/")
	if !ok || a == "" || b == "" || strings.Contains(b, "/") {
		return fail("%q is not namespace/name", shown(s.customHeaders))
	}
	if a != in.ing.Namespace && !t.o.AllowCrossNamespaceResources {
		return fail("ConfigMap %s/%s is in another namespace (allowCrossNamespaceResources is off)", a, b)
	}
	cm, err := t.cl.ConfigMap(a, b)
	if err != nil {
		return fail("ConfigMap %s/%s: %v", a, b, err)
	}
	if len(cm.Data) > maxCustomHeaders {
		return fail("ConfigMap %s/%s has %d headers, over the %d limit", a, b, len(cm.Data), maxCustomHeaders)
	}
	out := map[string]string{}
	for _, k := range slices.Sorted(mapsKeys(cm.Data)) {
		v := cm.Data[k]
		if !headerName.MatchString(k) {
			return fail("ConfigMap %s/%s: %q is not a header name", a, b, k)
		}
		if !slices.ContainsFunc(t.o.GlobalAllowedResponseHeaders, func(h string) bool { return strings.EqualFold(h, k) }) {
			return fail("ConfigMap %s/%s: header %q is not in globalAllowedResponseHeaders", a, b, k)
		}
		if strings.ContainsAny(v, "\r\n\x00") || len(v) > maxValueBytes {
			return fail("ConfigMap %s/%s: the value of %q has a line break or is over %d bytes", a, b, k, maxValueBytes)
		}
		if v == "" {
			return fail("ConfigMap %s/%s: the value of %q is empty", a, b, k)
		}
		out[k] = v
	}
	return out
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
