package middleware

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// Middleware wraps a handler. Built once per configuration generation,
// never per request.
type Middleware func(http.Handler) http.Handler

// Resolver gives a middleware access to the other objects of its generation.
// dataplane's Generation implements it. Names are qualified ("auth@file").
type Resolver interface {
	// Middleware builds (or returns the cached) named middleware. It returns
	// an error for an unknown name or a reference cycle (chains that loop).
	Middleware(ctx context.Context, name string) (Middleware, error)
	// Service returns the handler of the named service (for errors pages).
	Service(ctx context.Context, name string) (http.Handler, error)
}

// New builds the middleware called name (qualified) from its configuration:
// a switch on the union's set field. It returns an error naming the field
// and what is wrong for bad options (bad regexp, missing usersFile, unknown
// service, …); the caller disables the routers that use it.
//
// ctx bounds the build only (a chain resolves its members with it); no
// middleware keeps it or starts goroutines. Long-lived state (rate-limit
// buckets, circuit-breaker statistics, the forwardAuth client's idle
// connections, which close after 30s unused) belongs to the returned value
// and is garbage once the generation that built it is.
//
// Every error has the form "middleware NAME: KIND.FIELD: what is wrong".
func New(ctx context.Context, name string, c *config.Middleware, res Resolver) (Middleware, error) {
	kinds := config.MiddlewareKinds(c)
	if len(kinds) != 1 {
		return nil, fmt.Errorf("middleware %s: want exactly one kind, got %d (%s)", name, len(kinds), strings.Join(kinds, ", "))
	}
	var (
		m   Middleware
		err error
	)
	switch {
	case c.AddPrefix != nil:
		m, err = newAddPrefix(c.AddPrefix)
	case c.StripPrefix != nil:
		m, err = newStripPrefix(c.StripPrefix)
	case c.StripPrefixRegex != nil:
		m, err = newStripPrefixRegex(c.StripPrefixRegex)
	case c.ReplacePath != nil:
		m, err = newReplacePath(c.ReplacePath)
	case c.ReplacePathRegex != nil:
		m, err = newReplacePathRegex(c.ReplacePathRegex)
	case c.Chain != nil:
		m, err = newChain(ctx, c.Chain, res)
	case c.IPAllowList != nil:
		m, err = newIPAllowList(c.IPAllowList)
	case c.IPWhiteList != nil:
		m, err = newIPAllowList(c.IPWhiteList)
	case c.Headers != nil:
		m, err = newHeaders(c.Headers)
	case c.Errors != nil:
		m, err = newErrors(ctx, c.Errors, res)
	case c.RateLimit != nil:
		m, err = newRateLimit(name, c.RateLimit, res)
	case c.RedirectRegex != nil:
		m, err = newRedirectRegex(c.RedirectRegex)
	case c.RedirectScheme != nil:
		m, err = newRedirectScheme(c.RedirectScheme)
	case c.BasicAuth != nil:
		m, err = newBasicAuth(c.BasicAuth)
	case c.DigestAuth != nil:
		m, err = newDigestAuth(c.DigestAuth)
	case c.ForwardAuth != nil:
		m, err = newForwardAuth(c.ForwardAuth)
	case c.InFlightReq != nil:
		m, err = newInFlightReq(c.InFlightReq)
	case c.Buffering != nil:
		m, err = newBuffering(c.Buffering)
	case c.CircuitBreaker != nil:
		m, err = newCircuitBreaker(c.CircuitBreaker)
	case c.Compress != nil:
		m, err = newCompress(c.Compress)
	case c.PassTLSClientCert != nil:
		m, err = newPassTLSClientCert(c.PassTLSClientCert)
	case c.Retry != nil:
		m, err = newRetry(c.Retry)
	case c.ContentType != nil:
		m, err = newContentType(c.ContentType)
	case c.GrpcWeb != nil:
		m, err = newGrpcWeb(c.GrpcWeb)
	case c.EncodedCharacters != nil:
		m, err = newEncodedCharacters(c.EncodedCharacters)
	case c.RequestHeaderModifier != nil:
		m, err = newRequestHeaderModifier(c.RequestHeaderModifier)
	case c.ResponseHeaderModifier != nil:
		m, err = newResponseHeaderModifier(c.ResponseHeaderModifier)
	case c.RequestRedirect != nil:
		m, err = newRequestRedirect(c.RequestRedirect)
	case c.URLRewrite != nil:
		m, err = newURLRewrite(c.URLRewrite)
	default:
		return nil, fmt.Errorf("middleware %s: kind %s is not supported", name, kinds[0])
	}
	if err != nil {
		return nil, fmt.Errorf("middleware %s: %s%w", name, fieldPrefix(kinds[0], err), err)
	}
	return m, nil
}

// handle returns the Middleware whose handler calls serve with the next
// handler and the request: the shape of every middleware here that does
// its work per request in one function.
func handle(serve func(next http.Handler, w http.ResponseWriter, r *http.Request)) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(next, w, r) })
	}
}

// Chain composes ms around h, ms[0] outermost. Nil entries are skipped.
func Chain(h http.Handler, ms ...Middleware) http.Handler {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i] != nil {
			h = ms[i](h)
		}
	}
	return h
}

// fieldError is a bad option: Field is the option's path inside the
// middleware kind ("prefixes[1]", "ipStrategy.excludedIPs[0]").
type fieldError struct {
	Field string
	Err   error
}

func (e *fieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *fieldError) Unwrap() error { return e.Err }

// errField returns a *fieldError for field with a formatted message.
func errField(field, format string, a ...any) error {
	return &fieldError{Field: field, Err: fmt.Errorf(format, a...)}
}

// errEmpty is the *fieldError of a required option left empty.
func errEmpty(field string) error {
	return &fieldError{Field: field, Err: errors.New("empty")}
}

// compileRegexp compiles a regexp option; the error quotes s.
func compileRegexp(s string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, fmt.Errorf("bad regexp %q: %w", s, err)
	}
	return re, nil
}

// requiredRegexp compiles the regexp s of option field, which must not be
// empty; the error is a *fieldError naming field.
func requiredRegexp(field, s string) (*regexp.Regexp, error) {
	if s == "" {
		return nil, errEmpty(field)
	}
	re, err := compileRegexp(s)
	if err != nil {
		return nil, errField(field, "%w", err)
	}
	return re, nil
}

// parseEach parses every entry of the list option field with parse, in
// order; the error is a *fieldError naming the entry ("field[i]").
func parseEach[T any](field string, list []string, parse func(string) (T, error)) ([]T, error) {
	out := make([]T, len(list))
	for i, s := range list {
		v, err := parse(s)
		if err != nil {
			return nil, errField(fmt.Sprintf("%s[%d]", field, i), "%w", err)
		}
		out[i] = v
	}
	return out, nil
}

// parseRequired is parseEach for a list option that must not be empty.
func parseRequired[T any](field string, list []string, parse func(string) (T, error)) ([]T, error) {
	if len(list) == 0 {
		return nil, errEmpty(field)
	}
	return parseEach(field, list, parse)
}

// fieldPrefix returns "kind." when err is a *fieldError, so that the full
// message reads "middleware x@file: stripPrefixRegex.regex[0]: …", and
// "kind: " otherwise.
func fieldPrefix(kind string, err error) string {
	if _, ok := err.(*fieldError); ok {
		return kind + "."
	}
	return kind + ": "
}
