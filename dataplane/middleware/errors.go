package middleware

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/replay"
	"github.com/gantry-proxy/gantry/dataplane/statusrange"
)

// newErrors serves an error page from c.Service when the response status
// is in one of c.Status ("500-599", "404"). The page is fetched with GET at
// c.Query (default "/"), where {status} is the status sent to the client,
// {originalStatus} the status of the response caught and {url} the
// query-escaped request URL as Traefik builds it
// ("scheme://host/path?query", as this middleware received it). A status
// entry may hold several comma-separated codes or ranges, the form labels
// use ("500,502,505-599"). The client gets the page's body and headers
// with the original status, or with the one c.StatusRewrites (v3.4) maps
// it to (the first matching range in key order); the status written, so
// the one access logs and metrics record, is the one sent. The page
// request carries the client's headers, or only those named in
// c.ErrorRequestHeaders when set (v3.7; an empty list sends none), the
// client's Host and its address (for X-Forwarded-For). c.Service may name
// another provider's service ("pages@file").
// Source: https://doc.traefik.io/traefik/middlewares/http/errorpages/ and
// pkg/middlewares/customerrors/custom_errors.go (v3.7).
func newErrors(ctx context.Context, c *config.ErrorPage, res Resolver) (Middleware, error) {
	if len(c.Status) == 0 {
		return nil, errEmpty("status")
	}
	ranges, err := parseStatusList("status", c.Status)
	if err != nil {
		return nil, err
	}
	type rewrite struct {
		statusrange.Range
		to int
	}
	var rewrites []rewrite
	for _, k := range slices.Sorted(maps.Keys(c.StatusRewrites)) {
		sr, err := statusrange.Parse(k)
		if err != nil {
			return nil, errField("statusRewrites."+k, "%w", err)
		}
		to := c.StatusRewrites[k]
		if to < 100 || to > 599 {
			return nil, errField("statusRewrites."+k, "%d is not an HTTP status", to)
		}
		rewrites = append(rewrites, rewrite{sr, to})
	}
	if c.Service == "" {
		return nil, errEmpty("service")
	}
	if res == nil {
		return nil, errors.New("no resolver to look up services")
	}
	svc, err := res.Service(ctx, c.Service)
	if err != nil {
		return nil, &fieldError{Field: "service", Err: fmt.Errorf("%q: %w", c.Service, err)}
	}
	reqHeaders := c.ErrorRequestHeaders // nil: all
	query := c.Query
	if query == "" {
		query = "/"
	}
	if !strings.HasPrefix(query, "/") {
		query = "/" + query
	}
	caught := ranges.Contains
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		cw := replay.NewWriter(w, caught, false)
		next.ServeHTTP(cw, r)
		if !cw.Caught() {
			return
		}
		status := cw.Code()
		for _, rw := range rewrites {
			if rw.Contains(cw.Code()) {
				status = rw.to
				break
			}
		}
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		orig := &url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
		q := strings.NewReplacer(
			"{status}", strconv.Itoa(status),
			"{originalStatus}", strconv.Itoa(cw.Code()),
			"{url}", url.QueryEscape(orig.String()),
		).Replace(query)
		pu, err := url.Parse(q)
		if err != nil {
			http.Error(w, http.StatusText(status), status)
			return
		}
		pr := r.Clone(r.Context())
		pr.Method = http.MethodGet
		pr.Body = http.NoBody
		pr.ContentLength = 0
		if reqHeaders != nil {
			pr.Header = http.Header{}
			for _, k := range reqHeaders {
				if v := r.Header.Values(k); len(v) > 0 {
					pr.Header[http.CanonicalHeaderKey(k)] = slices.Clone(v)
				}
			}
		}
		pr.Header.Del("Content-Length")
		pr.Header.Del("Transfer-Encoding")
		pr.URL.Path, pr.URL.RawPath, pr.URL.RawQuery = pu.Path, pu.RawPath, pu.RawQuery
		pr.RequestURI = pr.URL.RequestURI()
		rec := recorderOf(w)
		if rec != nil {
			rec.RecordOrigin(cw.Code())
		}
		sw := &statusWriter{ResponseWriter: w, code: status}
		start := time.Now()
		svc.ServeHTTP(sw, pr)
		if rec != nil {
			rec.RecordServiceCall(c.Service, sw.got, time.Since(start), sw.bytes)
		}
	}), nil
}

// statusWriter replaces the status code of the response written through
// it, keeping the one the page service answered (got) and the body bytes.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
	got   int
	bytes int64
}

func (s *statusWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		return
	}
	if !s.wrote {
		s.wrote, s.got = true, code
		s.ResponseWriter.WriteHeader(s.code)
	}
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// serviceRecorder is the request's record for the observers (the
// dataplane's proxy.Exchange), found through the writer chain.
type serviceRecorder interface {
	RecordOrigin(status int)
	RecordServiceCall(service string, status int, d time.Duration, bytes int64)
}

// recorderOf returns the serviceRecorder under w, or nil.
func recorderOf(w http.ResponseWriter) serviceRecorder {
	for range 16 {
		if r, ok := w.(serviceRecorder); ok {
			return r
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
