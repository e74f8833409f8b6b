package acme

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-acme/lego/v5/challenge"
	"github.com/go-acme/lego/v5/providers/dns/exec"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers/acme/dnshelper"
)

// helperEnv makes this test binary the DNS-01 helper (TestMain), serving
// one provider, lego's exec, as gantry runs gantry-dns with all of them:
// this package's tests link no provider SDK.
const helperEnv = "GANTRY_ACME_TEST_DNS_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(dnshelper.Run(dnshelper.Registry{
			Lookup: func(name string) (func() (challenge.Provider, error), bool) {
				if strings.EqualFold(name, "exec") {
					return func() (challenge.Provider, error) { return exec.NewDNSProvider() }, true
				}
				return nil, false
			},
			Names: func() []string { return []string{"exec"} },
		}))
	}
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	os.Setenv(helperEnv, "1") // for the helpers the tests start
	dnsHelperPath = func() (string, error) { return exe, nil }
	os.Exit(m.Run())
}

// Without the helper program beside gantry, a dnsChallenge is refused
// with an error naming the field and where the helper was looked for; the
// other challenges work.
func TestNoDNSHelper(t *testing.T) {
	saved := dnsHelperPath
	missing := filepath.Join(t.TempDir(), DNSHelper)
	dnsHelperPath = func() (string, error) { return missing, nil }
	defer func() { dnsHelperPath = saved }()
	_, err := New(staticWith(map[string]*static.ACME{"le": {DNSChallenge: &static.DNSChallenge{Provider: "exec"}}}), &memKV{}, slog.New(slog.DiscardHandler), "t")
	if want := `certificatesResolvers.le.acme.dnsChallenge.provider: DNS provider "exec": the DNS-01 helper is not installed: ` + missing; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, errNoDNSHelper) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
	if _, err := New(staticWith(map[string]*static.ACME{"le": {TLSChallenge: &static.TLSChallenge{}}}), &memKV{}, slog.New(slog.DiscardHandler), "t"); err != nil {
		t.Errorf("tlsChallenge without the DNS helper: %v", err)
	}
}

// A provider whose constructor fails (its variables are missing) stops
// the resolver with the provider's own message, from the helper.
func TestDNSProviderConfigError(t *testing.T) {
	t.Setenv("EXEC_PATH", "")
	_, err := New(staticWith(map[string]*static.ACME{"le": {DNSChallenge: &static.DNSChallenge{Provider: "EXEC"}}}), &memKV{}, slog.New(slog.DiscardHandler), "t")
	if want := "certificatesResolvers.le.acme.dnsChallenge.provider: DNS provider exec: exec: some credentials information are missing: EXEC_PATH"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
}
