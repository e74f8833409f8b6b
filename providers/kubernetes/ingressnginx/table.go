package ingressnginx

import (
	"slices"
	"strings"
)

// Prefix is the prefix of every ingress-nginx annotation.
const Prefix = "nginx.ingress.kubernetes.io/"

// Support says how Gantry serves one ingress-nginx annotation.
type Support string

// Support levels, from best to worst.
const (
	// Exact: served as ingress-nginx documents it.
	Exact Support = "exact"
	// Approximated: served, with the difference in the table's Note (and
	// in the verdict's Detail).
	Approximated Support = "approximated"
	// Refused: not served. For a Critical annotation the Ingress's paths
	// answer 503 (serving them without it would open what it protects);
	// otherwise the Ingress is served without the annotation.
	Refused Support = "refused"
)

// Annotation is one row of the classification table: the one source of
// truth for the provider's problems, `gantry migrate ingress-nginx` and the
// dashboard's migration page.
type Annotation struct {
	// Name is the annotation without Prefix ("rewrite-target").
	Name    string  `json:"name"`
	Support Support `json:"support"`
	// Note says how an approximation differs, or why Gantry refuses.
	Note string `json:"note,omitempty"`
	// Critical marks an annotation whose refusal must not leave the paths
	// open (authentication, source ranges, snippets): they answer 503.
	Critical bool `json:"critical,omitempty"`
}

// table lists every annotation Gantry knows, by Name. An annotation under
// Prefix that is not listed is refused as unknown (not critical).
// Source: ingress-nginx docs/user-guide/nginx-configuration/annotations.md
// (controller v1.15) and Traefik v3.7 pkg/provider/kubernetes/ingress-nginx.
var table = []Annotation{
	{Name: "rewrite-target", Support: Exact, Note: "the whole path is replaced by the target with $1..$9 from the path's capture groups, as nginx's rewrite ... break; the query is kept"},
	{Name: "use-regex", Support: Exact, Note: "every path of the host becomes a case-insensitive regular expression anchored at the start (Go RE2 syntax: PCRE-only constructs are refused)"},
	{Name: "app-root", Support: Approximated, Note: "requests for / are redirected to the app root with 302 for GET and HEAD, 307 for other methods (ingress-nginx: 302 for all)"},
	{Name: "ssl-redirect", Support: Approximated, Note: "plain-HTTP requests to a host with TLS are redirected to HTTPS with 301 for GET and HEAD, 308 for other methods (ingress-nginx: 308 for all)"},
	{Name: "force-ssl-redirect", Support: Approximated, Note: "as ssl-redirect, also for hosts without TLS"},
	{Name: "backend-protocol", Support: Exact, Note: "HTTP, HTTPS (certificate not verified, as proxy-ssl-verify off), GRPC (h2c), GRPCS; AUTO_HTTP and FCGI are refused"},
	{Name: "canary", Support: Exact, Note: "the canary Ingress's other annotations are ignored, as ingress-nginx ignores them"},
	{Name: "canary-by-header", Support: Exact, Note: "value always sends to the canary, never to the main backend"},
	{Name: "canary-by-header-value", Support: Exact},
	{Name: "canary-by-header-pattern", Support: Approximated, Note: "Go RE2 regular expression, matched unanchored (ingress-nginx: PCRE)"},
	{Name: "canary-by-cookie", Support: Exact, Note: "cookie value always sends to the canary, never to the main backend"},
	{Name: "canary-weight", Support: Exact},
	{Name: "canary-weight-total", Support: Exact},
	{Name: "auth-url", Support: Approximated, Note: "forwardAuth: the auth service gets the request's headers with X-Forwarded-Method/-Proto/-Host/-Uri (ingress-nginx: X-Original-URL, X-Original-Method); any non-2xx answer is returned to the client (ingress-nginx: 401 and 403, other statuses become 500)", Critical: true},
	{Name: "auth-signin", Support: Approximated, Note: "a 401 from auth-url becomes a 302 to the sign-in URL with rd=<escaped original URL> (ingress-nginx: the unescaped scheme://host and escaped request URI)", Critical: true},
	{Name: "auth-signin-redirect-param", Support: Exact},
	{Name: "auth-response-headers", Support: Exact},
	{Name: "auth-method", Support: Refused, Note: "forwardAuth always sends the client's method"},
	{Name: "auth-type", Support: Exact, Note: "basic and digest, users from the auth-secret Secret", Critical: true},
	{Name: "auth-secret", Support: Exact, Note: "htpasswd lines with bcrypt, SHA1 or APR1/MD5 hashes (crypt(3) DES and plaintext lines are refused)", Critical: true},
	{Name: "auth-secret-type", Support: Exact, Note: "auth-file (key auth) or auth-map (one key per user)"},
	{Name: "auth-realm", Support: Exact},
	{Name: "whitelist-source-range", Support: Exact, Note: "ipAllowList on the peer address, 403 outside the ranges", Critical: true},
	{Name: "allowlist-source-range", Support: Exact, Note: "as whitelist-source-range", Critical: true},
	{Name: "denylist-source-range", Support: Refused, Note: "Gantry has no deny list", Critical: true},
	{Name: "proxy-body-size", Support: Approximated, Note: "a larger request body gets 413; Gantry buffers the request and the response to enforce it (ingress-nginx buffers requests only); 0 is no limit"},
	{Name: "affinity", Support: Exact, Note: "cookie only: sticky sessions by cookie, HttpOnly"},
	{Name: "affinity-mode", Support: Approximated, Note: "balanced and persistent both keep a session on its server while it is up"},
	{Name: "session-cookie-name", Support: Exact, Note: "default INGRESSCOOKIE"},
	{Name: "session-cookie-path", Support: Exact, Note: "default the Ingress path"},
	{Name: "session-cookie-domain", Support: Exact},
	{Name: "session-cookie-samesite", Support: Exact},
	{Name: "session-cookie-secure", Support: Exact},
	{Name: "session-cookie-max-age", Support: Exact},
	{Name: "session-cookie-expires", Support: Approximated, Note: "sent as Max-Age (seconds) when session-cookie-max-age is not set, not as an Expires date"},
	{Name: "session-cookie-change-on-failure", Support: Approximated, Note: "a session whose server is down always moves to another server"},
	{Name: "enable-cors", Support: Approximated, Note: "CORS headers as ingress-nginx sends them; a preflight is answered 200 (ingress-nginx: 204)"},
	{Name: "cors-allow-origin", Support: Exact, Note: "exact origins and single-level *.domain wildcards"},
	{Name: "cors-allow-methods", Support: Exact},
	{Name: "cors-allow-headers", Support: Exact},
	{Name: "cors-expose-headers", Support: Exact},
	{Name: "cors-allow-credentials", Support: Exact},
	{Name: "cors-max-age", Support: Exact},
	{Name: "limit-rps", Support: Approximated, Note: "rateLimit per client IP with burst limit-rps × limit-burst-multiplier; over the limit Gantry answers 429 (ingress-nginx: 503)"},
	{Name: "limit-rpm", Support: Approximated, Note: "as limit-rps, per minute"},
	{Name: "limit-burst-multiplier", Support: Exact, Note: "default 5"},
	{Name: "limit-connections", Support: Approximated, Note: "inFlightReq: concurrent requests (not connections) per client IP; over the limit Gantry answers 429 (ingress-nginx: 503)"},
	{Name: "custom-headers", Support: Exact, Note: "response headers from the ConfigMap namespace/name; each must be listed in globalAllowedResponseHeaders"},
	{Name: "permanent-redirect", Support: Approximated, Note: "301 for GET and HEAD, 308 for other methods (ingress-nginx: permanent-redirect-code, default 301, for all)"},
	{Name: "permanent-redirect-code", Support: Approximated, Note: "any 3xx gives 301/308 as above"},
	{Name: "temporal-redirect", Support: Approximated, Note: "302 for GET and HEAD, 307 for other methods (ingress-nginx: 302 for all)"},
	{Name: "upstream-vhost", Support: Exact, Note: "the Host header sent to the backend"},
	{Name: "proxy-connect-timeout", Support: Exact, Note: "seconds, the serversTransport dial timeout"},
	{Name: "proxy-read-timeout", Support: Approximated, Note: "seconds, bounds the wait for the response header (ingress-nginx: between two reads)"},
	{Name: "proxy-send-timeout", Support: Approximated, Note: "accepted; Gantry has no per-write timeout toward backends"},
	{Name: "server-alias", Support: Exact, Note: "an alias that is another rule's host is ignored, as ingress-nginx ignores it"},
	{Name: "configuration-snippet", Support: Refused, Note: "raw nginx configuration", Critical: true},
	{Name: "server-snippet", Support: Refused, Note: "raw nginx configuration", Critical: true},
	{Name: "auth-snippet", Support: Refused, Note: "raw nginx configuration", Critical: true},
	{Name: "stream-snippet", Support: Refused, Note: "raw nginx configuration", Critical: true},
	{Name: "modsecurity-snippet", Support: Refused, Note: "raw nginx configuration", Critical: true},
	{Name: "enable-modsecurity", Support: Refused, Note: "Gantry has no web application firewall", Critical: true},
	{Name: "enable-owasp-core-rules", Support: Refused, Note: "Gantry has no web application firewall", Critical: true},
	{Name: "auth-tls-secret", Support: Refused, Note: "client certificates per Ingress are not translated", Critical: true},
	{Name: "auth-tls-verify-client", Support: Refused, Note: "client certificates per Ingress are not translated", Critical: true},
	{Name: "satisfy", Support: Refused, Note: "auth requirements are always all required", Critical: true},
	{Name: "ssl-passthrough", Support: Refused, Note: "TLS passthrough per Ingress is not translated", Critical: true},
}

var tableByName = func() map[string]Annotation {
	m := make(map[string]Annotation, len(table))
	for _, a := range table {
		m[a.Name] = a
	}
	return m
}()

// Table returns a copy of the classification table, sorted by name.
func Table() []Annotation {
	t := slices.Clone(table)
	slices.SortFunc(t, func(a, b Annotation) int { return strings.Compare(a.Name, b.Name) })
	return t
}

// Lookup returns the table row of an annotation key (with or without
// Prefix). An unknown name under Prefix is a refused, non-critical row.
func Lookup(key string) Annotation {
	name := strings.TrimPrefix(key, Prefix)
	if a, ok := tableByName[name]; ok {
		return a
	}
	return Annotation{Name: name, Support: Refused, Note: "not translated by Gantry"}
}
