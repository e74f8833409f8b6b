package config

// The middleware kinds in this file are what Traefik's Kubernetes Gateway
// provider generates for HTTPRoute filters (Traefik pkg/config/dynamic:
// requestHeaderModifier, responseHeaderModifier, requestRedirect,
// urlRewrite). Their semantics are the Gateway API's, not those of the
// older middlewares they resemble.
// Source: https://gateway-api.sigs.k8s.io/reference/spec/#httproutefilter

// HeaderModifier is the RequestHeaderModifier or ResponseHeaderModifier
// filter: Set replaces a header's values with one value, Add appends a
// value to those present (or adds the header), Remove deletes headers.
// Header names are case-insensitive. Set and Add apply before Remove.
type HeaderModifier struct {
	Set    map[string]string `json:"set,omitempty"`
	Add    map[string]string `json:"add,omitempty"`
	Remove []string          `json:"remove,omitempty"`
}

// RequestRedirect is the RequestRedirect filter: it answers StatusCode
// (301, 302, 303, 307 or 308; 0 means 302) with a Location built from the
// request and the fields that are set.
//
// Scheme "" keeps the request's scheme. Hostname "" keeps the request's
// host (without its port). Port 0 means the well-known port of the
// resulting scheme; a well-known port (80 for http, 443 for https) is
// never written in the Location. Path, when set, replaces the whole path;
// else PathPrefix, when set, replaces the leading path prefix PathMatch
// (the route's PathPrefix match) as URLRewrite does. The query is kept.
type RequestRedirect struct {
	Scheme     string  `json:"scheme,omitempty"`
	Hostname   string  `json:"hostname,omitempty"`
	Port       int     `json:"port,omitempty"`
	Path       *string `json:"path,omitempty"`
	PathPrefix *string `json:"pathPrefix,omitempty"`
	PathMatch  string  `json:"pathMatch,omitempty"`
	StatusCode int     `json:"statusCode,omitempty"`
}

// URLRewrite is the URLRewrite filter: Hostname, when set, replaces the
// Host sent upstream; Path replaces the whole path; PathPrefix replaces
// the prefix PathMatch of the path, element-wise: with PathMatch "/foo"
// and PathPrefix "/xyz", "/foo/bar" becomes "/xyz/bar" and "/foo"
// becomes "/xyz"; an empty or "/" PathPrefix turns "/foo/bar" into
// "/bar" and "/foo" into "/".
type URLRewrite struct {
	Hostname   string  `json:"hostname,omitempty"`
	Path       *string `json:"path,omitempty"`
	PathPrefix *string `json:"pathPrefix,omitempty"`
	PathMatch  string  `json:"pathMatch,omitempty"`
}
