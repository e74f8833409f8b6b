package crd

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// middlewares publishes each Middleware as "<ns>-<name>".
func (b *builder) middlewares(objs []*Middleware) {
	publishEach(b, "Middleware", "middleware", objs, b.conf.HTTP.Middlewares, b.middleware)
}

// middleware translates one Middleware; field locates an error.
func (b *builder) middleware(o *Middleware, id string) (*config.Middleware, string, error) {
	sp, ns := &o.Spec, o.Namespace
	m := &config.Middleware{
		AddPrefix:         sp.AddPrefix,
		StripPrefix:       sp.StripPrefix,
		StripPrefixRegex:  sp.StripPrefixRegex,
		ReplacePath:       sp.ReplacePath,
		ReplacePathRegex:  sp.ReplacePathRegex,
		IPWhiteList:       sp.IPWhiteList,
		IPAllowList:       sp.IPAllowList,
		EncodedCharacters: sp.EncodedCharacters,
		RedirectRegex:     sp.RedirectRegex,
		RedirectScheme:    sp.RedirectScheme,
		InFlightReq:       sp.InFlightReq,
		Buffering:         sp.Buffering,
		CircuitBreaker:    sp.CircuitBreaker,
		Compress:          sp.Compress,
		PassTLSClientCert: sp.PassTLSClientCert,
		Retry:             sp.Retry,
		ContentType:       sp.ContentType,
		GrpcWeb:           sp.GrpcWeb,
	}
	if len(sp.Plugin) > 0 {
		return nil, "spec.plugin", errors.New("plugins are not supported by Gantry")
	}
	if h := sp.Headers; h != nil {
		hd, field, err := headers(h)
		if err != nil {
			return nil, field, err
		}
		m.Headers = hd
	}
	if c := sp.Chain; c != nil {
		ch, field, err := b.chain(ns, id, c)
		if err != nil {
			return nil, field, err
		}
		m.Chain = ch
	}
	if a := sp.BasicAuth; a != nil {
		users, err := b.authUsers(ns, a.Secret, true)
		if err != nil {
			return nil, "spec.basicAuth.secret", err
		}
		m.BasicAuth = &config.BasicAuth{Users: users, Realm: a.Realm, RemoveHeader: a.RemoveHeader, HeaderField: a.HeaderField}
	}
	if a := sp.DigestAuth; a != nil {
		users, err := b.authUsers(ns, a.Secret, false)
		if err != nil {
			return nil, "spec.digestAuth.secret", err
		}
		m.DigestAuth = &config.DigestAuth{Users: users, Realm: a.Realm, RemoveHeader: a.RemoveHeader, HeaderField: a.HeaderField}
	}
	if fa := sp.ForwardAuth; fa != nil {
		f, field, err := b.forwardAuth(ns, fa)
		if err != nil {
			return nil, "spec.forwardAuth" + field, err
		}
		m.ForwardAuth = f
	}
	if e := sp.Errors; e != nil {
		name, lb, err := b.service(ns, e.Service)
		if err != nil {
			return nil, "spec.errors.service", err
		}
		if lb != nil {
			name = id + "-errorpage-service"
			b.publish(name, lb)
		}
		ep := e.ErrorPage
		ep.Service = name
		m.Errors = &ep
	}
	if rl := sp.RateLimit; rl != nil {
		r, err := b.rateLimit(ns, rl)
		if err != nil {
			return nil, "spec.rateLimit.redis", err
		}
		m.RateLimit = r
	}
	return m, "", nil
}

// headers translates headers, refusing the options Traefik v3 deprecated
// (field names the one set).
func headers(h *Headers) (*config.Headers, string, error) {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"featurePolicy", h.FeaturePolicy != nil && *h.FeaturePolicy != ""},
		{"sslRedirect", h.SSLRedirect != nil && *h.SSLRedirect},
		{"sslTemporaryRedirect", h.SSLTemporaryRedirect != nil && *h.SSLTemporaryRedirect},
		{"sslHost", h.SSLHost != nil && *h.SSLHost != ""},
		{"sslForceHost", h.SSLForceHost != nil && *h.SSLForceHost},
	} {
		if f.set {
			return nil, "spec.headers." + f.name, errors.New("deprecated in Traefik v3 and not supported by Gantry (use permissionsPolicy, a redirectScheme or redirectRegex middleware)")
		}
	}
	hd := h.Headers
	return &hd, "", nil
}

// chain resolves a chain's middlewares in namespace ns (at most
// maxChainElements; the chain id cannot name itself).
func (b *builder) chain(ns, id string, c *Chain) (*config.Chain, string, error) {
	if len(c.Middlewares) > maxChainElements {
		return nil, "spec.chain.middlewares", fmt.Errorf("%d middlewares, over the limit of %d", len(c.Middlewares), maxChainElements)
	}
	ch := &config.Chain{}
	for i, r := range c.Middlewares {
		name, err := b.resolveRef("middleware", ns, r)
		if err != nil {
			return nil, fmt.Sprintf("spec.chain.middlewares[%d]", i), err
		}
		if name == id {
			return nil, fmt.Sprintf("spec.chain.middlewares[%d]", i), errors.New("a chain cannot contain itself")
		}
		ch.Middlewares = append(ch.Middlewares, name)
	}
	return ch, "", nil
}

// forwardAuth translates forwardAuth, its TLS from Secrets.
func (b *builder) forwardAuth(ns string, fa *ForwardAuth) (*config.ForwardAuth, string, error) {
	switch {
	case fa.Address == "":
		return nil, ".address", errors.New("required")
	case fa.AuthSigninURL != "":
		return nil, ".authSigninURL", errors.New("not supported by Gantry")
	case fa.MaxResponseBodySize != nil:
		return nil, ".maxResponseBodySize", errors.New("not supported by Gantry")
	}
	t, err := b.clientTLS(ns, fa.TLS)
	if err != nil {
		return nil, "", err
	}
	f := fa.ForwardAuth
	f.TLS = t
	return &f, "", nil
}

// rateLimit translates rateLimit, Redis credentials from a Secret (keys
// username and password).
func (b *builder) rateLimit(ns string, rl *RateLimit) (*config.RateLimit, error) {
	out := &config.RateLimit{SourceCriterion: rl.SourceCriterion}
	if rl.Average != nil {
		out.Average = *rl.Average
	}
	if rl.Burst != nil {
		out.Burst = *rl.Burst
	}
	if rl.Period != nil {
		out.Period = *rl.Period
	}
	r := rl.Redis
	if r == nil {
		return out, nil
	}
	rr := &config.RateLimitRedis{
		Endpoints: slices.Clone(r.Endpoints), DB: r.DB, PoolSize: r.PoolSize,
		MinIdleConns: r.MinIdleConns, MaxActiveConns: r.MaxActiveConns,
	}
	for _, d := range []struct {
		dst *config.Duration
		src *config.Duration
	}{{&rr.ReadTimeout, r.ReadTimeout}, {&rr.WriteTimeout, r.WriteTimeout}, {&rr.DialTimeout, r.DialTimeout}} {
		if d.src != nil {
			*d.dst = *d.src
		}
	}
	t, err := b.clientTLS(ns, r.TLS)
	if err != nil {
		return nil, err
	}
	rr.TLS = t
	if r.Secret != "" {
		s, err := b.secret(ns, r.Secret)
		if err != nil {
			return nil, fmt.Errorf("secret: %w", err)
		}
		u, okU := s.Data["username"]
		p, okP := s.Data["password"]
		if !okU || !okP {
			return nil, fmt.Errorf("secret: secret %s/%s must hold both username and password", ns, r.Secret)
		}
		rr.Username, rr.Password = string(u), string(p)
	}
	out.Redis = rr
	return out, nil
}

// middlewareTCPs publishes each MiddlewareTCP as "<ns>-<name>".
func (b *builder) middlewareTCPs(objs []*MiddlewareTCP) {
	for _, o := range objs {
		id := providers.Normalize(makeID(o.Namespace, o.Name))
		t := b.conf.EnsureTCP()
		t.Middlewares[id] = &config.TCPMiddleware{
			InFlightConn: o.Spec.InFlightConn,
			IPWhiteList:  o.Spec.IPWhiteList,
			IPAllowList:  o.Spec.IPAllowList,
		}
		b.origins[config.KindTCPMiddleware+" "+id] = source("MiddlewareTCP", o.Namespace, o.Name)
	}
}
