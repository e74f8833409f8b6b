package acme

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// CertificateStatus describes one certificate a resolver holds or is
// ordering, for the API (/api/tls/certificates) and the dashboard.
type CertificateStatus struct {
	Resolver string   `json:"resolver"`
	Main     string   `json:"main"`
	SANs     []string `json:"sans,omitempty"`
	// Users are the routers (and defaultGeneratedCert) that need it; JSON
	// "usedBy" as in the API's other objects ("users" would be redacted as
	// basicAuth credentials).
	Users     []string  `json:"usedBy,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	DNSNames  []string  `json:"dnsNames,omitempty"`
	Issuer    string    `json:"issuer,omitempty"`
	Serial    string    `json:"serial,omitempty"`
	NotBefore time.Time `json:"notBefore,omitzero"`
	NotAfter  time.Time `json:"notAfter,omitzero"`
	RenewAt   time.Time `json:"renewAt,omitzero"`
	// State is "valid", "renewing" (due, order running or waiting to
	// retry), "ordering" (no certificate yet), "failed" (no certificate, the
	// last order failed), "expired" or "unused" (no router needs it).
	State       string    `json:"state"`
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	NextAttempt time.Time `json:"nextAttempt,omitzero"`
	Failures    int       `json:"failures,omitempty"`
}

// Certificates returns every wanted or held certificate, sorted by
// resolver and main domain.
func (m *Manager) Certificates() []CertificateStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	seen := map[string]bool{}
	var out []CertificateStatus
	for _, k := range slices.Sorted(maps.Keys(m.wanted)) {
		w := m.wanted[k]
		st := CertificateStatus{Resolver: w.resolver, Main: w.domain.Main, SANs: w.domain.SANs, Users: w.users, State: "ordering"}
		h := m.best(w, now)
		okey := k
		if h != nil {
			m.describe(&st, h)
			seen[w.resolver+"\x00"+string(h.cert.Certificate)] = true
			st.State = "valid"
			if !now.Before(st.RenewAt) {
				st.State = "renewing"
			}
			okey = domainKey(w.resolver, h.cert.Domain)
		}
		if o := m.orders[okey]; o != nil && o.lastErr != "" {
			st.LastError, st.LastErrorAt, st.Failures = o.lastErr, o.lastErrAt, o.failures
			if !o.running {
				st.NextAttempt = o.next
			}
			if h == nil {
				st.State = "failed"
			}
		}
		out = append(out, st)
	}
	for _, name := range slices.Sorted(maps.Keys(m.held)) {
		for _, h := range m.held[name] {
			if seen[name+"\x00"+string(h.cert.Certificate)] {
				continue
			}
			st := CertificateStatus{Resolver: name, Main: h.cert.Domain.Main, SANs: h.cert.Domain.SANs, State: "unused"}
			m.describe(&st, h)
			if !now.Before(h.leaf.NotAfter) {
				st.State = "expired"
			}
			out = append(out, st)
		}
	}
	return out
}

func (m *Manager) describe(st *CertificateStatus, h *held) {
	st.Subject = h.leaf.Subject.String()
	st.DNSNames = h.leaf.DNSNames
	st.Issuer = h.leaf.Issuer.String()
	st.Serial = h.leaf.SerialNumber.Text(16)
	st.NotBefore, st.NotAfter = h.leaf.NotBefore, h.leaf.NotAfter
	st.RenewAt = m.resolvers[st.Resolver].renewAt(h.leaf)
}

// Problems returns the live problems: routers naming an unknown resolver
// or a domain that cannot be ordered, stored data that could not be read,
// and every failed order, naming the resolver, the domains, the CA's error
// and what serves meanwhile.
func (m *Manager) Problems() []providers.Problem {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Concat(m.loadErrs, m.wantErrs)
	for _, name := range slices.Sorted(maps.Keys(m.skipped)) {
		out = append(out, providers.Problem{
			Provider: Name, Source: "certificatesResolvers." + name, Severity: providers.SeverityError,
			Message: "resolver skipped: " + m.skipped[name].Error() + "; routers asking for it are served the generated default certificate",
		})
	}
	for _, name := range slices.Sorted(maps.Keys(m.saveErrs)) {
		if err := m.saveErrs[name]; err != nil {
			out = append(out, providers.Problem{
				Provider: Name, Source: "certificatesResolvers." + name + ".acme.storage", Severity: providers.SeverityError,
				Message: "write account and certificates: " + err.Error() + "; they serve from memory and are lost at restart",
			})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.exportErrs)) {
		if err := m.exportErrs[name]; err != nil {
			out = append(out, providers.Problem{
				Provider: Name, Source: "certificatesResolvers." + name + ".acme.storage", Severity: providers.SeverityError,
				Message: "write the storage file: " + err.Error() + "; certificates are kept in Gantry's store and keep serving and renewing",
			})
		}
	}
	for _, s := range m.shared {
		if err := s.Health(); err != nil {
			out = append(out, providers.Problem{
				Provider: Name, Source: s.String(), Severity: providers.SeverityError,
				Message: "shared storage: " + err.Error() + "; certificates already held keep serving, orders and renewals wait for it",
			})
		}
	}
	now := m.now()
	for _, k := range slices.Sorted(maps.Keys(m.orders)) {
		o := m.orders[k]
		if o.lastErr == "" {
			continue
		}
		var users []string
		serving := "the generated default certificate serves meanwhile"
		for _, w := range m.wanted {
			if w.resolver != o.resolver {
				continue
			}
			if h := m.best(w, now); h != nil && domainKey(w.resolver, h.cert.Domain) == k {
				serving = fmt.Sprintf("the current certificate (valid until %s) keeps serving", h.leaf.NotAfter.UTC().Format(time.RFC3339))
				users = append(users, w.users...)
			} else if w.key() == k {
				users = append(users, w.users...)
			}
		}
		if len(users) == 0 {
			continue // no longer needed
		}
		next := "retrying now"
		if !o.running {
			next = "next attempt " + o.next.UTC().Format(time.RFC3339)
		}
		out = append(out, providers.Problem{
			Provider: Name,
			Source:   "certificatesResolvers." + o.resolver,
			Objects:  slices.Compact(slices.Sorted(slices.Values(users))),
			Severity: providers.SeverityError,
			Message: fmt.Sprintf("domain %s: certificate order failed (%d attempts, %s): %s; %s",
				strings.Join(domainNames(o.domain), ","), o.failures, next, o.lastErr, serving),
		})
	}
	return out
}

// Wants returns the certificates c needs from the resolvers, as
// "resolver|names" keys, and the problems of routers asking for what
// cannot be ordered (unknown resolver, wildcard without DNS-01, no Host).
// It does not change the Manager (gantry validate uses it).
func (m *Manager) Wants(c *config.Configuration) ([]string, []providers.Problem) {
	ws, probs := m.wants(c)
	return slices.Sorted(maps.Keys(ws)), probs
}
