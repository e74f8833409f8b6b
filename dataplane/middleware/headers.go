package middleware

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// newHeaders sets custom request and response headers (an empty value
// removes the header; a custom request "Host" sets the request host),
// answers and decorates CORS requests, enforces allowedHosts (500 "Bad
// Host", as Traefik's secure library) and adds security response headers
// (HSTS only on TLS requests, on requests carrying one of sslProxyHeaders,
// or with forceSTSHeader; isDevelopment turns off allowedHosts and HSTS).
// Source: https://doc.traefik.io/traefik/middlewares/http/headers/
func newHeaders(c *config.Headers) (Middleware, error) {
	h := &headers{c: c}
	var err error
	if h.originRegex, err = parseEach("accessControlAllowOriginListRegex", c.AccessControlAllowOriginListRegex, compileRegexp); err != nil {
		return nil, err
	}
	if c.AccessControlMaxAge < 0 {
		return nil, errField("accessControlMaxAge", "%d is negative", c.AccessControlMaxAge)
	}
	if c.STSSeconds < 0 {
		return nil, errField("stsSeconds", "%d is negative", c.STSSeconds)
	}
	h.reqSet, h.reqDel = splitCustom(c.CustomRequestHeaders)
	h.respSet, h.respDel = splitCustom(c.CustomResponseHeaders)
	h.hasCORS = len(c.AccessControlAllowOriginList) > 0 || len(c.AccessControlAllowOriginListRegex) > 0 ||
		len(c.AccessControlAllowHeaders) > 0 || len(c.AccessControlAllowMethods) > 0 ||
		len(c.AccessControlExposeHeaders) > 0 || c.AccessControlAllowCredentials || c.AccessControlMaxAge > 0
	h.security = h.buildSecurity()
	if c.STSSeconds > 0 {
		v := "max-age=" + strconv.FormatInt(c.STSSeconds, 10)
		if c.STSIncludeSubdomains {
			v += "; includeSubDomains"
		}
		if c.STSPreload {
			v += "; preload"
		}
		h.sts = []string{v}[:1:1]
	}
	for _, k := range c.HostsProxyHeaders {
		h.hostHeaders = append(h.hostHeaders, http.CanonicalHeaderKey(k))
	}
	return h.wrap, nil
}

// kv is a header and its value as a one-element slice with capacity 1,
// made once and shared by every request: header maps get this slice
// instead of a new one per request (append on it copies, and nothing in
// net/http or httputil writes header values in place).
type kv struct {
	k string
	v []string
}

func newKV(k, v string) kv { return kv{k, []string{v}[:1:1]} }

// splitCustom sorts a custom-header map into sets and removals, in key
// order so that the result does not depend on map iteration.
func splitCustom(m map[string]string) (set []kv, del []string) {
	for k, v := range m {
		ck := http.CanonicalHeaderKey(k)
		if v == "" {
			del = append(del, ck)
		} else {
			set = append(set, newKV(ck, v))
		}
	}
	slices.SortFunc(set, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	slices.Sort(del)
	return set, del
}

type headers struct {
	c               *config.Headers
	originRegex     []*regexp.Regexp
	reqSet, respSet []kv
	reqDel, respDel []string
	hasCORS         bool
	security        []kv // static security response headers
	sts             []string
	hostHeaders     []string
}

func (h *headers) buildSecurity() []kv {
	c := h.c
	var s []kv
	switch {
	case c.CustomFrameOptionsValue != "":
		s = append(s, newKV("X-Frame-Options", c.CustomFrameOptionsValue))
	case c.FrameDeny:
		s = append(s, newKV("X-Frame-Options", "DENY"))
	}
	if c.ContentTypeNosniff {
		s = append(s, newKV("X-Content-Type-Options", "nosniff"))
	}
	switch {
	case c.CustomBrowserXSSValue != "":
		s = append(s, newKV("X-Xss-Protection", c.CustomBrowserXSSValue))
	case c.BrowserXSSFilter:
		s = append(s, newKV("X-Xss-Protection", "1; mode=block"))
	}
	if c.ContentSecurityPolicy != "" {
		s = append(s, newKV("Content-Security-Policy", c.ContentSecurityPolicy))
	}
	if c.ContentSecurityPolicyReportOnly != "" {
		s = append(s, newKV("Content-Security-Policy-Report-Only", c.ContentSecurityPolicyReportOnly))
	}
	if c.PublicKey != "" {
		s = append(s, newKV("Public-Key-Pins", c.PublicKey))
	}
	if c.ReferrerPolicy != "" {
		s = append(s, newKV("Referrer-Policy", c.ReferrerPolicy))
	}
	if c.PermissionsPolicy != "" {
		s = append(s, newKV("Permissions-Policy", c.PermissionsPolicy))
	}
	return s
}

func (h *headers) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := h.c
		if len(c.AllowedHosts) > 0 && !c.IsDevelopment && !h.hostAllowed(r) {
			http.Error(w, "Bad Host", http.StatusInternalServerError)
			return
		}
		origin := r.Header.Get("Origin")
		if h.hasCORS && origin != "" && r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.preflight(w, r, origin)
			return
		}
		for _, d := range h.reqDel {
			delete(r.Header, d)
		}
		for _, s := range h.reqSet {
			if s.k == "Host" {
				r.Host = s.v[0]
				continue
			}
			r.Header[s.k] = s.v
		}
		sts := h.sts != nil && !c.IsDevelopment && (c.ForceSTSHeader || h.isSSL(r))
		if len(h.security) == 0 && !sts && len(h.respSet) == 0 && len(h.respDel) == 0 && (!h.hasCORS || origin == "") {
			next.ServeHTTP(w, r)
			return
		}
		hw := &headersWriter{hookWriter: hookWriter{ResponseWriter: w}, hdr: h, sts: sts, origin: origin}
		hw.hook = hw
		next.ServeHTTP(&hw.hookWriter, r)
		hw.finish()
	})
}

func (h *headers) hostAllowed(r *http.Request) bool {
	host := r.Host
	for _, k := range h.hostHeaders {
		if v := r.Header.Get(k); v != "" {
			host = v
			break
		}
	}
	for _, a := range h.c.AllowedHosts {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

func (h *headers) isSSL(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	for k, v := range h.c.SSLProxyHeaders {
		if r.Header.Get(k) == v {
			return true
		}
	}
	return false
}

// allowOrigin returns the Access-Control-Allow-Origin value for origin, or
// "". A "*" in the list answers "*", or the origin itself when credentials
// are allowed (the Fetch standard refuses "*" with credentials).
func (h *headers) allowOrigin(origin string) string {
	for _, o := range h.c.AccessControlAllowOriginList {
		if o == "*" {
			if h.c.AccessControlAllowCredentials {
				return origin
			}
			return "*"
		}
		if o == origin {
			return origin
		}
	}
	for _, re := range h.originRegex {
		if re.MatchString(origin) {
			return origin
		}
	}
	return ""
}

// wildcardWithCredentials reports whether list is the wildcard ["*"] while
// credentials are allowed: then "*" is no wildcard to a browser
// (https://fetch.spec.whatwg.org/#http-new-header-syntax) and the request's
// own values are answered instead, as Traefik's headers middleware does.
func (h *headers) wildcardWithCredentials(list []string) bool {
	return h.c.AccessControlAllowCredentials && slices.Contains(list, "*")
}

// preflight answers a CORS preflight request itself with 200
// (https://fetch.spec.whatwg.org/#cors-preflight-fetch): credentials,
// allowed headers and methods (with credentials, a "*" echoes the
// request's Access-Control-Request-Headers / -Method), origin, max age and
// the exposed headers (a "*" with credentials is left out), as Traefik's
// headers middleware and the Gateway API's HTTPRouteCORS conformance test
// expect.
func (h *headers) preflight(w http.ResponseWriter, r *http.Request, origin string) {
	c := h.c
	rh := w.Header()
	if c.AccessControlAllowCredentials {
		rh.Set("Access-Control-Allow-Credentials", "true")
	}
	switch {
	case h.wildcardWithCredentials(c.AccessControlAllowHeaders):
		if v := r.Header.Get("Access-Control-Request-Headers"); v != "" {
			rh.Set("Access-Control-Allow-Headers", v)
		}
	case len(c.AccessControlAllowHeaders) > 0:
		rh.Set("Access-Control-Allow-Headers", strings.Join(c.AccessControlAllowHeaders, ","))
	}
	switch {
	case h.wildcardWithCredentials(c.AccessControlAllowMethods):
		rh.Set("Access-Control-Allow-Methods", r.Header.Get("Access-Control-Request-Method"))
	case len(c.AccessControlAllowMethods) > 0:
		rh.Set("Access-Control-Allow-Methods", strings.Join(c.AccessControlAllowMethods, ","))
	}
	if o := h.allowOrigin(origin); o != "" {
		rh.Set("Access-Control-Allow-Origin", o)
	}
	if c.AccessControlMaxAge > 0 {
		rh.Set("Access-Control-Max-Age", strconv.FormatInt(c.AccessControlMaxAge, 10))
	}
	h.exposeHeaders(rh)
	w.WriteHeader(http.StatusOK)
}

// exposeHeaders sets Access-Control-Expose-Headers, except for a "*" with
// credentials (which a browser would read as a header named "*").
func (h *headers) exposeHeaders(rh http.Header) {
	if e := h.c.AccessControlExposeHeaders; len(e) > 0 && !h.wildcardWithCredentials(e) {
		rh.Set("Access-Control-Expose-Headers", strings.Join(e, ","))
	}
}

// corsResponse adds the CORS headers of an actual (non-preflight) response.
func (h *headers) corsResponse(rh http.Header, origin string) {
	c := h.c
	o := h.allowOrigin(origin)
	if o != "" {
		rh.Set("Access-Control-Allow-Origin", o)
	}
	if c.AddVaryHeader && o != "" && o != "*" {
		rh.Add("Vary", "Origin")
	}
	if c.AccessControlAllowCredentials {
		rh.Set("Access-Control-Allow-Credentials", "true")
	}
	h.exposeHeaders(rh)
}

// headersWriter is the response side of headers: one allocation per
// request holds the writer and what the hook needs.
type headersWriter struct {
	hookWriter
	hdr    *headers
	sts    bool
	origin string
}

func (hw *headersWriter) beforeHeader(rh http.Header, code int) int {
	h := hw.hdr
	for _, s := range h.security {
		rh[s.k] = s.v
	}
	if hw.sts {
		rh["Strict-Transport-Security"] = h.sts
	}
	if h.hasCORS && hw.origin != "" {
		h.corsResponse(rh, hw.origin)
	}
	for _, d := range h.respDel {
		delete(rh, d)
	}
	for _, s := range h.respSet {
		rh[s.k] = s.v
	}
	return code
}
