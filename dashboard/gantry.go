package dashboard

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// providerItem is one provider in /api/providers.
type providerItem struct {
	Name string `json:"name"`
	providers.SourceState
	// Problems are this provider's inputs it could not use, each naming
	// its source (container and label key, file and line, Consul key).
	Problems []providers.Problem `json:"problemList"`
}

func (a *API) sources(v *view) map[string]providers.SourceState {
	if a.opts.Sources != nil {
		return a.opts.Sources.Sources()
	}
	return v.merged.Sources
}

func (a *API) getProviders(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.providerList(a.view()))
}

// providerList is every provider's state with its problems, by name.
func (a *API) providerList(v *view) []providerItem {
	src := a.sources(v)
	byProvider := map[string][]providers.Problem{}
	for _, p := range v.merged.Problems {
		byProvider[p.Provider] = append(byProvider[p.Provider], p)
	}
	names := sortedNames(src)
	for n := range byProvider {
		if _, ok := src[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var backends map[string]providers.SourceState
	if a.opts.Backends != nil {
		backends = a.opts.Backends()
		for n := range backends {
			if _, ok := src[n]; !ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
	}
	items := make([]providerItem, 0, len(names))
	for _, n := range names {
		if st, ok := backends[n]; ok {
			items = append(items, providerItem{Name: n, SourceState: st, Problems: backendProblems(n, st)})
			continue
		}
		it := providerItem{Name: n, SourceState: src[n], Problems: byProvider[n]}
		if it.Problems == nil {
			it.Problems = []providers.Problem{}
		}
		if it.State == "" {
			it.State = "unknown"
		}
		items = append(items, it)
	}
	return items
}

// problems lists every problem: the configuration's (configProblems),
// then the live ones: failed ACME orders, file certificates near or past
// their expiry, and backends down.
func (a *API) problems(v *view) []providers.Problem {
	out := v.configProblems()
	if a.opts.Certificates != nil { // live: a failed order changes no configuration
		out = append(out, a.opts.Certificates.Problems()...)
	}
	now := a.opts.Now() // live too: a file certificate nears its expiry
	out = append(out, certificateProblems(a.certificates(now), now)...)
	if a.opts.Backends != nil { // live too: a Redis down
		b := a.opts.Backends()
		for _, n := range sortedNames(b) {
			out = append(out, backendProblems(n, b[n])...)
		}
	}
	return out
}

// configProblems lists the problems of v's configuration: the providers'
// (inputs skipped, each with its source) followed by the objects the
// compiled table reports in error or warning (source "router web@file"
// etc.), sorted within each group, then TLS and notFound errors.
func (v *view) configProblems() []providers.Problem {
	out := append([]providers.Problem{}, v.merged.Problems...)
	add := func(kind, name, status string, errs []string) {
		if status == StatusEnabled || status == "" {
			return
		}
		sev := providers.SeverityError
		if status == StatusWarning {
			sev = providers.SeverityWarning
		}
		msg := strings.Join(errs, "; ")
		if msg == "" {
			msg = status
		}
		src := kind + " " + name
		o := v.merged.Origins[src]
		if ro := v.merged.Origins["rule "+src]; ro != "" && len(errs) > 0 && strings.HasPrefix(errs[0], "rule") {
			o = ro // a rule error: the rule's line is the one to edit
		}
		if o != "" {
			src = o + " (" + src + ")" // where the provider found it
		}
		out = append(out, providers.Problem{
			Provider: providers.ProviderOf(name), Source: src,
			Objects: []string{kind + " " + name}, Message: msg, Severity: sev,
		})
	}
	for _, p := range []struct {
		prefix                string
		routers               map[string]*router.RouterStatus
		services, middlewares map[string]*router.ObjectStatus
	}{
		{"", v.status.Routers, v.status.Services, v.status.Middlewares},
		{"tcp ", v.status.TCPRouters, v.status.TCPServices, v.status.TCPMiddlewares},
		{"udp ", v.status.UDPRouters, v.status.UDPServices, nil},
	} {
		for _, n := range sortedNames(p.routers) {
			add(p.prefix+"router", n, p.routers[n].Status, p.routers[n].Errors)
		}
		for _, n := range sortedNames(p.services) {
			add(p.prefix+"service", n, p.services[n].Status, p.services[n].Errors)
		}
		for _, n := range sortedNames(p.middlewares) {
			add(p.prefix+"middleware", n, p.middlewares[n].Status, p.middlewares[n].Errors)
		}
	}
	// Certificates, TLS options and stores that failed to load (a missing
	// certFile): the rest of TLS keeps working, the problem is shown here.
	for _, e := range v.status.TLS {
		out = append(out, providers.Problem{Source: "tls", Message: e, Severity: providers.SeverityError})
	}
	for _, e := range v.status.TLSWarnings { // a TLS 1.3 suite in cipherSuites
		out = append(out, providers.Problem{Source: "tls", Message: e, Severity: providers.SeverityWarning})
	}
	for _, e := range v.status.NotFound { // entryPoints.<ep>.http.notFound
		out = append(out, providers.Problem{Source: "notFound", Message: e, Severity: providers.SeverityError})
	}
	return out
}

// backendProblems is the problem of a backend that is down (none
// otherwise).
func backendProblems(name string, st providers.SourceState) []providers.Problem {
	if st.State != providers.StateDown {
		return []providers.Problem{}
	}
	effect := "retrying"
	if strings.HasPrefix(name, "redis ") {
		effect = "requests through its rate limits are answered 500 until it answers"
	}
	return []providers.Problem{{Source: name, Severity: providers.SeverityError, Message: "unreachable: " + st.LastError + "; " + effect}}
}

func (a *API) getProblems(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.problems(a.view()))
}

// SimulateRequest is the body of POST /api/simulate.
type SimulateRequest struct {
	Method     string            `json:"method"`  // default GET
	URL        string            `json:"url"`     // absolute: "https://example.com/path?q=1"
	Headers    map[string]string `json:"headers"` // extra request headers
	ClientIP   string            `json:"clientIP"`
	EntryPoint string            `json:"entryPoint"` // required when several entrypoints exist
}

// maxSimulateBody bounds the simulator's request body (bytes).
const maxSimulateBody = 64 << 10

func (a *API) postSimulate(w http.ResponseWriter, r *http.Request) {
	var in SimulateRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxSimulateBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "simulate: bad JSON body: "+err.Error())
		return
	}
	req, ep, err := a.simulated(in)
	if err != nil {
		writeError(w, http.StatusBadRequest, "simulate: "+err.Error())
		return
	}
	ex := a.tables.Current().Explain(ep, req)
	if ex == nil {
		ex = &router.Explanation{EntryPoint: ep}
	}
	if ex.Candidates == nil {
		ex.Candidates = []router.Candidate{}
	}
	writeJSON(w, http.StatusOK, ex)
}

// simulated builds the request the simulator routes.
func (a *API) simulated(in SimulateRequest) (*http.Request, string, error) {
	method := strings.ToUpper(strings.TrimSpace(in.Method))
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(in.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, "", fmt.Errorf("url: %q is not an absolute http(s) URL", in.URL)
	}
	req, err := http.NewRequest(method, u.String(), http.NoBody)
	if err != nil {
		return nil, "", fmt.Errorf("method %q: %w", method, err)
	}
	req.RequestURI = u.RequestURI()
	for k, v := range in.Headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	ip := in.ClientIP
	if ip == "" {
		ip = "127.0.0.1"
	}
	if net.ParseIP(ip) == nil {
		return nil, "", fmt.Errorf("clientIP: %q is not an IP address", in.ClientIP)
	}
	req.RemoteAddr = net.JoinHostPort(ip, "40000")
	if u.Scheme == "https" {
		req.TLS = simulatedTLS(u.Hostname())
	}
	ep := in.EntryPoint
	eps, _ := a.entryPoints() // dynamic ones can be explained too
	if ep == "" {
		if len(eps) != 1 {
			return nil, "", fmt.Errorf("entryPoint: required, one of %s", strings.Join(sortedNames(eps), ", "))
		}
		ep = sortedNames(eps)[0]
	} else if eps != nil {
		if _, ok := eps[ep]; !ok {
			return nil, "", fmt.Errorf("entryPoint: %q is not configured (have %s)", ep, strings.Join(sortedNames(eps), ", "))
		}
	}
	return req, ep, nil
}
