package middleware

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// Timeouts of the forwardAuth client.
const (
	forwardAuthTimeout     = 30 * time.Second // whole exchange, as Traefik
	forwardAuthDialTimeout = 10 * time.Second
)

// hopHeaders are removed from the request sent to the auth server and from
// its error responses (RFC 9110 §7.6.1); Proxy-Authorization is forwarded
// on purpose (RFC 9110 §11.7.2).
var hopHeaders = []string{"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Proxy-Connection"}

// newForwardAuth asks the server at c.Address whether to let a request
// through. The auth request is a GET (or the original method with
// preserveRequestMethod) carrying the request's headers (only
// authRequestHeaders when set, never hop-by-hop ones), and
// X-Forwarded-For/-Method/-Proto/-Host/-Uri describing the original request
// (taken from the incoming X-Forwarded-* only with trustForwardHeader), and,
// with forwardBody, the body (at most maxBodySize bytes, -1 unlimited;
// larger bodies get 401). A 2xx answer lets the request through with
// authResponseHeaders / authResponseHeadersRegex copied from the answer,
// replacing request headers of the same names, and the cookies named in
// addAuthCookiesToResponse replacing the backend's cookies of those names.
// Any other answer is returned to the client (a relative Location made
// absolute unless preserveLocationHeader). An unreachable server gives 500
// (499 when the client went away). headerField names the auth answer's
// header that carries the user name for Traefik's access log; it is
// accepted and changes nothing here, as the access log records no user.
// Redirects are not followed; the exchange times out after 30s.
// Source: https://doc.traefik.io/traefik/middlewares/http/forwardauth/
func newForwardAuth(c *config.ForwardAuth) (Middleware, error) {
	if c.Address == "" {
		return nil, errEmpty("address")
	}
	u, err := url.Parse(c.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errField("address", "%q: want an absolute http or https URL", c.Address)
	}
	fa := &forwardAuth{c: c, address: u.String(), maxBody: -1}
	if c.MaxBodySize != nil {
		fa.maxBody = *c.MaxBodySize
	}
	if c.AuthResponseHeadersRegex != "" {
		if fa.respRegex, err = compileRegexp(c.AuthResponseHeadersRegex); err != nil {
			return nil, errField("authResponseHeadersRegex", "%w", err)
		}
	}
	for _, h := range c.AuthResponseHeaders {
		fa.respHeaders = append(fa.respHeaders, http.CanonicalHeaderKey(h))
	}
	for _, h := range c.AuthRequestHeaders {
		fa.reqHeaders = append(fa.reqHeaders, http.CanonicalHeaderKey(h))
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: forwardAuthDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       30 * time.Second, // a replaced generation leaves nothing open for long
		TLSHandshakeTimeout:   forwardAuthDialTimeout,
		ResponseHeaderTimeout: forwardAuthTimeout,
	}
	if c.TLS != nil {
		if tr.TLSClientConfig, err = clientTLSConfig(c.TLS); err != nil {
			return nil, err
		}
	}
	fa.client = &http.Client{
		Transport:     tr,
		Timeout:       forwardAuthTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return fa.wrap, nil
}

// clientTLSConfig builds a TLS client configuration; CA, Cert and Key are
// file paths or inline PEM.
func clientTLSConfig(c *config.ClientTLS) (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: c.InsecureSkipVerify, MinVersion: tls.VersionTLS12} //nolint:gosec // user option
	if c.CA != "" {
		pem, err := pemOrFile(c.CA)
		if err != nil {
			return nil, errField("tls.ca", "%w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errField("tls.ca", "no PEM certificate found")
		}
		cfg.RootCAs = pool
	}
	if (c.Cert == "") != (c.Key == "") {
		return nil, errField("tls", "cert and key must be set together")
	}
	if c.Cert != "" {
		cert, err := pemOrFile(c.Cert)
		if err != nil {
			return nil, errField("tls.cert", "%w", err)
		}
		key, err := pemOrFile(c.Key)
		if err != nil {
			return nil, errField("tls.key", "%w", err)
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, errField("tls.cert", "%w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func pemOrFile(s string) ([]byte, error) {
	if strings.HasPrefix(strings.TrimSpace(s), "-----BEGIN") {
		return []byte(s), nil
	}
	return os.ReadFile(s)
}

type forwardAuth struct {
	c           *config.ForwardAuth
	address     string
	client      *http.Client
	maxBody     int64
	respHeaders []string
	respRegex   *regexp.Regexp
	reqHeaders  []string
}

var errBodyTooLarge = errors.New("request body too large")

// statusClientClosedRequest is nginx's 499, used when the client went away.
const statusClientClosedRequest = 499

func (fa *forwardAuth) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := http.MethodGet
		if fa.c.PreserveRequestMethod {
			method = r.Method
		}
		var body io.Reader
		// A CONNECT body of unknown length is tunnel data, not a body.
		tunnel := r.Method == http.MethodConnect && r.ContentLength < 0
		if fa.c.ForwardBody && !tunnel && r.Body != nil && r.Body != http.NoBody {
			b, err := readLimited(r.Body, fa.maxBody)
			if errors.Is(err, errBodyTooLarge) {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			if err != nil {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			body = bytes.NewReader(b)
		}
		areq, err := http.NewRequestWithContext(r.Context(), method, fa.address, body)
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		fa.authHeaders(r, areq)
		resp, err := fa.client.Do(areq)
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, context.Canceled) {
				code = statusClientClosedRequest
			}
			w.WriteHeader(code)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 300 {
			fa.deny(w, resp)
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		for _, h := range fa.respHeaders {
			r.Header.Del(h)
			if v := resp.Header[h]; len(v) > 0 {
				r.Header[h] = slices.Clone(v)
			}
		}
		if fa.respRegex != nil {
			for k := range r.Header {
				if fa.respRegex.MatchString(k) {
					delete(r.Header, k)
				}
			}
			for k, v := range resp.Header {
				if fa.respRegex.MatchString(k) {
					r.Header[k] = slices.Clone(v)
				}
			}
		}
		cookies := fa.authCookies(resp)
		if len(cookies) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		hw := &hookWriter{ResponseWriter: w, hook: hookFunc(func(h http.Header, code int) int {
			mergeCookies(h, cookies)
			return code
		})}
		next.ServeHTTP(hw, r)
		hw.finish()
	})
}

// readLimited reads all of rc, failing with errBodyTooLarge past limit
// bytes (limit < 0: no limit).
func readLimited(rc io.ReadCloser, limit int64) ([]byte, error) {
	defer rc.Close()
	if limit < 0 {
		return io.ReadAll(rc)
	}
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errBodyTooLarge
	}
	return b, nil
}

func (fa *forwardAuth) authHeaders(r, areq *http.Request) {
	src := r.Header
	if len(fa.reqHeaders) > 0 {
		src = http.Header{}
		for _, h := range fa.reqHeaders {
			if v := r.Header[h]; len(v) > 0 {
				src[h] = v
			}
		}
	}
	for k, v := range src {
		areq.Header[k] = slices.Clone(v)
	}
	removeHop(areq.Header)
	trust := fa.c.TrustForwardHeader
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		if prior := r.Header.Values("X-Forwarded-For"); trust && len(prior) > 0 {
			ip = strings.Join(prior, ", ") + ", " + ip
		}
		areq.Header.Set("X-Forwarded-For", ip)
	}
	set := func(name, fallback string) {
		if v := r.Header.Get(name); v != "" && trust {
			areq.Header.Set(name, v)
			return
		}
		if fallback == "" {
			areq.Header.Del(name)
			return
		}
		areq.Header.Set(name, fallback)
	}
	proto := "http"
	if r.TLS != nil {
		proto = "https"
	}
	set("X-Forwarded-Method", r.Method)
	set("X-Forwarded-Proto", proto)
	set("X-Forwarded-Host", r.Host)
	set("X-Forwarded-Uri", requestURI(r))
	if !trust {
		areq.Header.Del("X-Forwarded-Port")
	}
}

// removeHop deletes hop-by-hop headers and those named in Connection.
func removeHop(h http.Header) {
	for _, c := range h.Values("Connection") {
		for f := range strings.SplitSeq(c, ",") {
			if f = strings.TrimSpace(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// deny returns the auth server's answer to the client.
func (fa *forwardAuth) deny(w http.ResponseWriter, resp *http.Response) {
	dst := w.Header()
	for k, v := range resp.Header {
		dst[k] = slices.Clone(v)
	}
	removeHop(dst)
	dst.Del("Content-Length")
	if !fa.c.PreserveLocationHeader {
		if loc, err := resp.Location(); err == nil {
			dst.Set("Location", loc.String())
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// authCookies returns the Set-Cookie values of resp whose cookie name is
// listed in addAuthCookiesToResponse.
func (fa *forwardAuth) authCookies(resp *http.Response) []*http.Cookie {
	if len(fa.c.AddAuthCookiesToResponse) == 0 {
		return nil
	}
	var out []*http.Cookie
	for _, ck := range resp.Cookies() {
		if slices.Contains(fa.c.AddAuthCookiesToResponse, ck.Name) {
			out = append(out, ck)
		}
	}
	return out
}

// mergeCookies adds cookies to h's Set-Cookie, replacing the backend's
// cookies of the same names.
func mergeCookies(h http.Header, cookies []*http.Cookie) {
	var keep []string
	for _, sc := range h.Values("Set-Cookie") {
		ck, err := http.ParseSetCookie(sc)
		if err == nil && slices.ContainsFunc(cookies, func(c *http.Cookie) bool { return c.Name == ck.Name }) {
			continue
		}
		keep = append(keep, sc)
	}
	for _, c := range cookies {
		keep = append(keep, c.String())
	}
	h["Set-Cookie"] = keep
}
