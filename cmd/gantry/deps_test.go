package main

import (
	"os/exec"
	"strings"
	"testing"
)

// What gantry links initialises at every start, configured or not (each
// package's init runs and touches its pages of the binary). Code that
// only some configurations use and that pulls in heavy SDKs stays out of
// the binary: lego's DNS-01 providers and the cloud SDKs they bring run in
// gantry-dns (package dnshelper).
func TestBinaryLinksNoDNSProviders(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, forbidden := range []string{
		"github.com/gantry-proxy/gantry/providers/acme/dnsproviders",
		"github.com/go-acme/lego/v5/providers/dns/",
		"github.com/aws/aws-sdk-go-v2/",
		"cloud.google.com/go/",
		"google.golang.org/api/",
		"github.com/baidubce/",
	} {
		for _, d := range deps {
			if d == forbidden || strings.HasPrefix(d, forbidden) {
				t.Errorf("cmd/gantry links %s (%s): it belongs in cmd/gantry-dns", d, forbidden)
				break
			}
		}
	}
}
