package dashboard

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/acme"
)

// Certificates gives the certificates of the ACME resolvers and their live
// problems (failed orders); *acme.Manager satisfies it.
type Certificates interface {
	Certificates() []acme.CertificateStatus
	Problems() []providers.Problem
}

// File certificate states beside acme.CertificateStatus's: "expiring"
// when less than a third of its lifetime is left (the window in which an
// ACME resolver would renew it; Gantry never renews a file certificate).
const fileExpiring = "expiring"

// getCertificates serves /api/tls/certificates: one object per certificate
// a resolver holds or is ordering (subject, SANs, issuer, resolver,
// notBefore, notAfter, renewAt, state, last error, usedBy), sorted by
// resolver and domain, then the certificates of the configuration's
// tls.certificates and default certificates (resolver "", state "valid",
// "expiring" or "expired"; usedBy the routers whose hosts it serves,
// "router NAME" or "tcp router NAME", else "store <name>" or "default
// certificate"), sorted by name; an empty list
// without any.
func (a *API) getCertificates(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.certificates(a.opts.Now()))
}

func (a *API) certificates(now time.Time) []acme.CertificateStatus {
	out := []acme.CertificateStatus{}
	if a.opts.Certificates != nil {
		out = append(out, a.opts.Certificates.Certificates()...)
	}
	return append(out, fileCertificates(a.tables.Current().Merged().Config, out, now)...)
}

// fileCertificates describes the certificates of c's tls section that no
// ACME resolver issued (those are listed by the resolver).
func fileCertificates(c *config.Configuration, fromACME []acme.CertificateStatus, now time.Time) []acme.CertificateStatus {
	if c == nil || c.TLS == nil {
		return nil
	}
	acmeSerials := map[string]bool{}
	for _, s := range fromACME {
		if s.Serial != "" {
			acmeSerials[s.Serial] = true
		}
	}
	stores := map[string][]string{} // serial -> stores
	for _, cs := range c.TLS.Certificates {
		if cs == nil {
			continue
		}
		for _, leaf := range observe.TLSCertificates(&config.TLSConfiguration{Certificates: []*config.CertAndStores{cs}}) {
			names := cs.Stores
			if len(names) == 0 {
				names = []string{"default"}
			}
			stores[leaf.SerialNumber.Text(16)] = names
		}
	}
	hosts := tlsRouterHosts(c)
	var out []acme.CertificateStatus
	seen := map[string]bool{}
	for _, leaf := range observe.TLSCertificates(c.TLS) {
		serial := leaf.SerialNumber.Text(16)
		if acmeSerials[serial] || seen[serial] {
			continue
		}
		seen[serial] = true
		st := acme.CertificateStatus{
			Main: leaf.Subject.CommonName, Subject: leaf.Subject.String(), DNSNames: leaf.DNSNames,
			Issuer: leaf.Issuer.String(), Serial: serial, NotBefore: leaf.NotBefore, NotAfter: leaf.NotAfter, State: "valid",
		}
		for _, n := range leaf.DNSNames {
			if st.Main == "" {
				st.Main = n
			} else if n != st.Main {
				st.SANs = append(st.SANs, n)
			}
		}
		st.Users = servedRouters(hosts, leaf.DNSNames)
		if len(st.Users) == 0 {
			for _, s := range stores[serial] {
				st.Users = append(st.Users, "store "+s)
			}
		}
		if len(st.Users) == 0 {
			st.Users = []string{"default certificate"} // a store's defaultCertificate
		}
		switch {
		case !now.Before(leaf.NotAfter):
			st.State = "expired"
		case leaf.NotAfter.Sub(now)*3 < leaf.NotAfter.Sub(leaf.NotBefore):
			st.State = fileExpiring
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(x, y acme.CertificateStatus) int {
		return cmp.Or(strings.Compare(x.Main, y.Main), strings.Compare(x.Serial, y.Serial))
	})
	return out
}

// tlsRouterHosts maps each router terminating TLS without a certResolver
// ("router NAME" for HTTP routers with tls, "tcp router NAME" for TCP ones
// without passthrough, as the ACME resolvers name their users) to the host names it is reached by: its tls.domains and
// the Host (HTTP) or HostSNI (TCP) matchers of its rule, lower-cased.
func tlsRouterHosts(c *config.Configuration) map[string][]string {
	out := map[string][]string{}
	add := func(name, expr, fn string, domains []config.Domain) {
		var hs []string
		for _, d := range domains {
			hs = append(hs, d.Main)
			hs = append(hs, d.SANs...)
		}
		hs = append(hs, acme.RuleCalls(expr, fn)...)
		for i := range hs {
			hs[i] = strings.ToLower(strings.TrimSuffix(hs[i], "."))
		}
		out[name] = hs
	}
	if c.HTTP != nil {
		for n, r := range c.HTTP.Routers {
			if r != nil && r.TLS != nil && r.TLS.CertResolver == "" {
				add("router "+n, r.Rule, "Host", r.TLS.Domains)
			}
		}
	}
	if c.TCP != nil {
		for n, r := range c.TCP.Routers {
			if r != nil && r.TLS != nil && !r.TLS.Passthrough && r.TLS.CertResolver == "" {
				add("tcp router "+n, r.Rule, "HostSNI", r.TLS.Domains)
			}
		}
	}
	return out
}

// servedRouters lists the routers of hosts with a host the names serve
// (exactly, or through a leftmost wildcard label), sorted.
func servedRouters(hosts map[string][]string, names []string) []string {
	var out []string
	for _, r := range sortedNames(hosts) {
		if slices.ContainsFunc(hosts[r], func(h string) bool { return certCovers(names, h) }) {
			out = append(out, r)
		}
	}
	return out
}

// certCovers reports whether a certificate for names serves host (RFC
// 6125 §6.4.3: a wildcard is the whole leftmost label and matches one).
func certCovers(names []string, host string) bool {
	for _, n := range names {
		n = strings.ToLower(n)
		if n == host {
			return true
		}
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			if i := strings.IndexByte(host, '.'); i > 0 && host[i+1:] == rest {
				return true
			}
		}
	}
	return false
}

// certificateProblems warns about each file certificate in the last third
// of its lifetime and each expired one (an error): Gantry does not renew
// them, someone must replace the file. The problem names the routers it
// serves.
func certificateProblems(list []acme.CertificateStatus, now time.Time) []providers.Problem {
	var out []providers.Problem
	for _, c := range list {
		if c.Resolver != "" || (c.State != fileExpiring && c.State != "expired") {
			continue
		}
		p := providers.Problem{Source: "tls.certificates", Severity: providers.SeverityWarning}
		for _, u := range c.Users {
			if strings.HasPrefix(u, "router ") || strings.HasPrefix(u, "tcp router ") {
				p.Objects = append(p.Objects, u)
			}
		}
		at := c.NotAfter.UTC().Format("2006-01-02 15:04 UTC")
		if c.State == "expired" {
			p.Severity = providers.SeverityError
			p.Message = fmt.Sprintf("certificate %s (issuer %s) expired at %s; Gantry does not renew file certificates: replace it", c.Main, c.Issuer, at)
		} else {
			p.Message = fmt.Sprintf("certificate %s (issuer %s) expires in %s, at %s; Gantry does not renew file certificates: replace it", c.Main, c.Issuer, remaining(c.NotAfter.Sub(now)), at)
		}
		out = append(out, p)
	}
	return out
}

// remaining writes d as days and hours, or hours and minutes under a day.
func remaining(d time.Duration) string {
	d = d.Round(time.Minute)
	days, h, m := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case days == 1:
		return fmt.Sprintf("1 day %d h", h)
	case days > 0:
		return fmt.Sprintf("%d days %d h", days, h)
	case h > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	}
	return fmt.Sprintf("%d min", m)
}
