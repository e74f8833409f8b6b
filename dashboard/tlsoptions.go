package dashboard

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// tlsOptionsItem is one named set of TLS options as the router page's TLS
// panel shows it (Traefik's tls.options): versions, cipher suites, curves,
// ALPN, SNI strictness and client authentication. The client CAs are
// counted, not listed (a caFiles entry may be the PEM itself).
type tlsOptionsItem struct {
	Name             string   `json:"name"`
	MinVersion       string   `json:"minVersion"`
	MaxVersion       string   `json:"maxVersion,omitempty"`
	CipherSuites     []string `json:"cipherSuites,omitempty"`
	CurvePreferences []string `json:"curvePreferences,omitempty"`
	ALPNProtocols    []string `json:"alpnProtocols,omitempty"`
	SniStrict        bool     `json:"sniStrict"`
	ClientAuthType   string   `json:"clientAuthType"`
	ClientCAs        int      `json:"clientCAs"`
	// Configured is false for "default" when the configuration does not
	// define it: Go's and Traefik's defaults apply (TLS 1.2 minimum).
	Configured bool `json:"configured"`
}

// getTLSOptions serves /api/tls/options: every named TLS options set of
// the running configuration, "default" always among them, sorted by name.
func (a *API) getTLSOptions(w http.ResponseWriter, _ *http.Request) {
	var opts map[string]*config.TLSOptions
	if c := a.tables.Current().Merged().Config; c != nil && c.TLS != nil {
		opts = c.TLS.Options
	}
	out := []tlsOptionsItem{}
	if _, ok := opts["default"]; !ok {
		out = append(out, tlsOptionsItem{Name: "default", MinVersion: "VersionTLS12", ClientAuthType: "NoClientCert"})
	}
	for _, n := range sortedNames(opts) {
		o := opts[n]
		if o == nil {
			continue
		}
		it := tlsOptionsItem{
			Name: n, MinVersion: o.MinVersion, MaxVersion: o.MaxVersion, CipherSuites: o.CipherSuites,
			CurvePreferences: o.CurvePreferences, ALPNProtocols: o.ALPNProtocols, SniStrict: o.SniStrict,
			ClientAuthType: o.ClientAuth.ClientAuthType, ClientCAs: len(o.ClientAuth.CAFiles), Configured: true,
		}
		if it.MinVersion == "" {
			it.MinVersion = "VersionTLS12"
		}
		if it.ClientAuthType == "" {
			it.ClientAuthType = "NoClientCert"
		}
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b tlsOptionsItem) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, out)
}
