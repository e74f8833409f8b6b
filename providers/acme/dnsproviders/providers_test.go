package dnsproviders

import (
	"slices"
	"testing"
)

// Lookup knows lego's names in any case and its aliases; Names lists the
// providers sorted, aliases aside.
func TestLookup(t *testing.T) {
	for _, name := range []string{"cloudflare", "Route53", "EXEC", "rfc2136", "acme-dns", "dnsupdate"} {
		if _, ok := Lookup(name); !ok {
			t.Errorf("Lookup(%q): unknown", name)
		}
	}
	if _, ok := Lookup("acmeville"); ok {
		t.Error(`Lookup("acmeville") found a provider`)
	}
	names := Names()
	if !slices.IsSorted(names) || !slices.Contains(names, "cloudflare") || slices.Contains(names, "rfc2136") || len(names) < 200 {
		t.Errorf("Names() = %d names %v…, want the sorted providers without aliases", len(names), names[:min(5, len(names))])
	}
}
