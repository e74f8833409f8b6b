package acme

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-acme/lego/v5/acme"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// memKV is an in-memory KV.
type memKV struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (k *memKV) Get(_ context.Context, b, key string) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.m[b+"/"+key], nil
}

func (k *memKV) Update(ctx context.Context, b, key string, fn func([]byte) ([]byte, error)) error {
	old, _ := k.Get(ctx, b, key)
	v, err := fn(old)
	if err != nil {
		return err
	}
	return k.Put(ctx, b, key, v)
}

func (k *memKV) Put(_ context.Context, b, key string, v []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string][]byte{}
	}
	k.m[b+"/"+key] = v
	return nil
}

func staticWith(resolvers map[string]*static.ACME) *static.Configuration {
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: ":80"}}, CertificatesResolvers: map[string]*static.CertificateResolver{}}
	for n, a := range resolvers {
		c.CertificatesResolvers[n] = &static.CertificateResolver{ACME: a}
	}
	return c
}

func newTestManager(t *testing.T, resolvers map[string]*static.ACME, kv KV) *Manager {
	t.Helper()
	m, err := New(staticWith(resolvers), kv, slog.New(slog.DiscardHandler), "test")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Bad options stop New with an error naming the option; an unknown DNS
// provider lists the available ones.
func TestNewValidates(t *testing.T) {
	for _, tt := range []struct {
		acme *static.ACME
		want string
	}{
		{&static.ACME{}, "certificatesResolvers.le.acme: no challenge"},
		{&static.ACME{KeyType: "DSA", TLSChallenge: &static.TLSChallenge{}}, "certificatesResolvers.le.acme.keyType \"DSA\""},
		{&static.ACME{CAServer: "http://ca", TLSChallenge: &static.TLSChallenge{}}, "caServer \"http://ca\": want an https://"},
		{&static.ACME{HTTPChallenge: &static.HTTPChallenge{EntryPoint: "nope"}}, "httpChallenge.entryPoint: no entrypoint \"nope\""},
		{&static.ACME{DNSChallenge: &static.DNSChallenge{Provider: "acmeville"}}, "unknown DNS provider \"acmeville\" (available in this build: exec)"},
		{&static.ACME{EAB: &static.EAB{Kid: "k"}, TLSChallenge: &static.TLSChallenge{}}, "eab: set both kid and hmacEncoded"},
		{&static.ACME{Storage: "consul://127.0.0.1:8500", TLSChallenge: &static.TLSChallenge{}}, "certificatesResolvers.le.acme.storage \"consul://127.0.0.1:8500\": want consul://[host:port]/<key prefix>"},
	} {
		_, err := New(staticWith(map[string]*static.ACME{"le": tt.acme}), &memKV{}, slog.New(slog.DiscardHandler), "t")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tt.acme, err, tt.want)
		}
	}
	if _, err := New(&static.Configuration{CertificatesResolvers: map[string]*static.CertificateResolver{"ts": {}}}, &memKV{}, slog.New(slog.DiscardHandler), "t"); err == nil || !strings.Contains(err.Error(), "only acme") {
		t.Errorf("tailscale-only resolver: got %v", err)
	}
}

// An invalid resolver is skipped, as Traefik skips it, while the valid
// ones run: New still returns a Manager, the skipped resolver stays in
// Problems, and a router asking for it is a problem naming why.
func TestInvalidResolverIsSkippedNotFatal(t *testing.T) {
	m, err := New(staticWith(map[string]*static.ACME{
		"broken": {Email: "ops@example.com"}, // no challenge
		"le":     {HTTPChallenge: &static.HTTPChallenge{EntryPoint: "web"}},
	}), &memKV{}, slog.New(slog.DiscardHandler), "t")
	if err == nil || !strings.Contains(err.Error(), "certificatesResolvers.broken.acme: no challenge") {
		t.Fatalf("New: error %v, want the broken resolver's", err)
	}
	if m == nil || m.resolvers["le"] == nil || m.resolvers["broken"] != nil {
		t.Fatalf("New: manager %v, want the valid resolver only", m)
	}
	m.Observe(&providers.Merged{Config: &config.Configuration{HTTP: &config.HTTPConfiguration{Routers: map[string]*config.Router{
		"a@docker": {RouterCommon: config.RouterCommon{Rule: "Host(`a.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "broken"}},
		"b@docker": {RouterCommon: config.RouterCommon{Rule: "Host(`b.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le"}},
	}}}})
	var resolverProblem, routerProblem bool
	for _, p := range m.Problems() {
		switch {
		case p.Source == "certificatesResolvers.broken" && strings.Contains(p.Message, "resolver skipped: certificatesResolvers.broken.acme: no challenge"):
			resolverProblem = true
		case strings.Contains(p.Source, "a@docker") && strings.Contains(p.Message, `"broken" was skipped`):
			routerProblem = true
		case strings.Contains(p.Source, "b@docker"):
			t.Errorf("router of the valid resolver has a problem: %+v", p)
		}
	}
	if !resolverProblem || !routerProblem {
		t.Errorf("Problems() = %+v; want the skipped resolver (%v) and the router asking for it (%v)", m.Problems(), resolverProblem, routerProblem)
	}
}

// The certificates routers need, as Traefik derives them.
func TestWants(t *testing.T) {
	t.Setenv("EXEC_PATH", "/bin/true")
	m := newTestManager(t, map[string]*static.ACME{
		"le":  {HTTPChallenge: &static.HTTPChallenge{EntryPoint: "web"}},
		"dns": {DNSChallenge: &static.DNSChallenge{Provider: "exec"}},
	}, &memKV{})
	c := &config.Configuration{
		HTTP: &config.HTTPConfiguration{Routers: map[string]*config.Router{
			"hosts@docker":    {RouterCommon: config.RouterCommon{Rule: "Host(`B.example.com`) && PathPrefix(`/x`) || Host(`a.example.com.`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le"}},
			"same@file":       {RouterCommon: config.RouterCommon{Rule: "Host(`a.example.com`) || Host(`b.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le"}},
			"domains@file":    {RouterCommon: config.RouterCommon{Rule: "Host(`ignored.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "dns", Domains: []config.Domain{{Main: "*.example.org", SANs: []string{"example.org", "www.example.org", "example.org"}}}}},
			"wild@file":       {RouterCommon: config.RouterCommon{Rule: "Host(`x.example.net`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le", Domains: []config.Domain{{Main: "*.example.net"}}}},
			"unknown@file":    {RouterCommon: config.RouterCommon{Rule: "Host(`u.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "nope"}},
			"nohost@file":     {RouterCommon: config.RouterCommon{Rule: "PathPrefix(`/`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le"}},
			"ip@file":         {RouterCommon: config.RouterCommon{Rule: "Host(`10.0.0.1`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le"}},
			"noresolver@file": {RouterCommon: config.RouterCommon{Rule: "Host(`n.example.com`)"}, TLS: &config.RouterTLSConfig{}},
			"ss@file":         {RouterCommon: config.RouterCommon{Rule: "Host(`s.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "dns", Domains: []config.Domain{{Main: "*.*.example.com"}}}},
			"mid@file":        {RouterCommon: config.RouterCommon{Rule: "Host(`s.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "dns", Domains: []config.Domain{{Main: "s.example.com", SANs: []string{"a.*.example.com"}}}}},
		}},
		TCP: &config.TCPConfiguration{Routers: map[string]*config.TCPRouter{
			"db@file":   {RouterCommon: config.RouterCommon{Rule: "HostSNI(`db.example.com`)"}, TLS: &config.RouterTCPTLSConfig{RouterTLSConfig: config.RouterTLSConfig{CertResolver: "le"}}},
			"pass@file": {RouterCommon: config.RouterCommon{Rule: "HostSNI(`pass.example.com`)"}, TLS: &config.RouterTCPTLSConfig{RouterTLSConfig: config.RouterTLSConfig{CertResolver: "le"}, Passthrough: true}},
			"any@file":  {RouterCommon: config.RouterCommon{Rule: "HostSNI(`*`)"}, TLS: &config.RouterTCPTLSConfig{RouterTLSConfig: config.RouterTLSConfig{CertResolver: "le"}}},
		}},
		TLS: &config.TLSConfiguration{Stores: map[string]*config.TLSStore{"default": {DefaultGeneratedCert: &config.GeneratedCert{Resolver: "le", Domain: &config.Domain{Main: "default.example.com"}}}}},
	}
	ws, probs := m.wants(c)
	got := map[string][]string{}
	for k, w := range ws {
		got[k] = w.users
	}
	want := map[string][]string{
		"le|a.example.com,b.example.com": {"router hosts@docker", "router same@file"},
		"dns|*.example.org,example.org":  {"router domains@file"},
		"le|default.example.com":         {"tls.stores.default.defaultGeneratedCert"},
		"le|db.example.com":              {"tcp router db@file"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wants:\ngot  %v\nwant %v", got, want)
	}
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.Source+": "+p.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, w := range []string{
		"router wild@file: resolver le: the wildcard *.example.net needs the DNS-01 challenge",
		`router unknown@file: certificate resolver "nope" is not defined in certificatesResolvers (defined: dns, le)`,
		"router nohost@file: tls.certResolver le: the rule names no Host()",
		"router ip@file: 10.0.0.1 is an IP address",
		"tcp router any@file: tls.certResolver le: the rule names no HostSNI()",
		"router ss@file: *.*.example.com: ACME allows a wildcard only as the whole leftmost label",
		"router mid@file: a.*.example.com: ACME allows a wildcard only as the whole leftmost label",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q; got:\n%s", w, all)
		}
	}
	if len(probs) != 7 {
		t.Errorf("got %d problems, want 7:\n%s", len(probs), all)
	}
}

// Renewal: Traefik's table by certificatesDuration, but never later than
// two thirds into the certificate's real lifetime.
func TestRenewAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		hours int
		life  time.Duration
		want  time.Duration // before NotAfter
	}{
		{2160, 90 * 24 * time.Hour, 30 * 24 * time.Hour},
		{365 * 24, 365 * 24 * time.Hour, 120 * 24 * time.Hour},
		{7 * 24, 7 * 24 * time.Hour, 48 * time.Hour},
		{24, 24 * time.Hour, 6 * time.Hour},
		{1, time.Hour, 20 * time.Minute},
		{2160, 6 * 24 * time.Hour, 2 * 24 * time.Hour}, // CA issues 6-day certificates
		{1, 45 * time.Second, 15 * time.Second},
	} {
		r := &resolver{renewBefore: renewPeriod(tt.hours)}
		leaf := &x509.Certificate{NotBefore: now, NotAfter: now.Add(tt.life)}
		if got := leaf.NotAfter.Sub(r.renewAt(leaf)); got != tt.want {
			t.Errorf("certificatesDuration %dh, lifetime %v: renew %v before expiry, want %v", tt.hours, tt.life, got, tt.want)
		}
	}
}

// Retries back off exponentially, from 30s when the CA answered and from
// 5s when it could not be reached, and follow a rate limit's Retry-After.
func TestRetryDelay(t *testing.T) {
	caErr := fmt.Errorf("order: %w", &acme.ProblemDetails{Type: "urn:ietf:params:acme:error:unauthorized", HTTPStatus: 403})
	netErr := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	rl := fmt.Errorf("x: %w", &acme.RateLimitedError{ProblemDetails: &acme.ProblemDetails{HTTPStatus: 429}, RetryAfter: 3 * time.Hour})
	for _, tt := range []struct {
		n    int
		err  error
		want time.Duration
	}{
		{1, caErr, 30 * time.Second}, {2, caErr, time.Minute}, {4, caErr, 4 * time.Minute}, {20, caErr, maxRetry},
		{1, netErr, 5 * time.Second}, {3, netErr, 20 * time.Second}, {30, netErr, maxRetryNet},
		{1, rl, 3 * time.Hour},
	} {
		if got := retryDelay(tt.n, tt.err); got != tt.want {
			t.Errorf("attempt %d, %v: got %v, want %v", tt.n, tt.err, got, tt.want)
		}
	}
}

// selfSigned returns a PEM certificate and key for names.
func selfSigned(t testing.TB, life time.Duration, names ...string) (certPEM, keyPEM []byte, serial *big.Int) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial, _ = rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(life)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), serial
}

// traefikACMEJSON writes a Traefik acme.json (its documented layout: per
// resolver an Account with a PKCS#1 RSA key and Certificates with base64
// PEM) holding one certificate for names.
func traefikACMEJSON(t testing.TB, path, resolver string, mode os.FileMode, names ...string) *big.Int {
	t.Helper()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	cert, key, serial := selfSigned(t, 60*24*time.Hour, names...)
	doc := map[string]any{resolver: map[string]any{
		"Account": map[string]any{
			"Email":        "ops@example.com",
			"Registration": map[string]any{"body": map[string]any{"status": "valid", "contact": []string{"mailto:ops@example.com"}}, "uri": "https://ca.invalid/acme/acct/1"},
			"PrivateKey":   x509.MarshalPKCS1PrivateKey(rk),
			"KeyType":      "4096",
		},
		"Certificates": []any{
			map[string]any{"domain": map[string]any{"main": names[0], "sans": names[1:]}, "certificate": cert, "key": key, "Store": "default"},
			map[string]any{"domain": map[string]any{"main": "empty.example.com"}, "certificate": nil, "key": nil, "Store": "default"},
		},
	}}
	b, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
	return serial
}

// A Traefik acme.json is imported into the store on first start: the
// account (Traefik's RSA key) and certificates are kept, empty entries
// dropped, and the certificate is published at once; a valid certificate
// is not ordered again. A world-readable file is imported with a warning.
func TestImportServesWithoutOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "acme.json")
	serial := traefikACMEJSON(t, path, "le", 0o644, "c.example.com", "www.c.example.com")
	d, warn, err := importFile(path, "le")
	if err != nil || d == nil {
		t.Fatalf("importFile: %v, %v", d, err)
	}
	if !strings.Contains(warn, "readable by others") {
		t.Errorf("mode 0644: warning %q, want one about readability", warn)
	}
	if len(d.Certificates) != 1 || d.Account.GetRegistration().Location != "https://ca.invalid/acme/acct/1" || d.Account.GetPrivateKey() == nil {
		t.Fatalf("imported %+v", d)
	}

	kv := &memKV{}
	m := newTestManager(t, map[string]*static.ACME{"le": {CAServer: "https://127.0.0.1:1/dir", Storage: path, TLSChallenge: &static.TLSChallenge{}}}, kv)
	snaps := make(chan providers.Snapshot, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, func(s providers.Snapshot) { snaps <- s }) }()
	s := <-snaps
	if s.Config.TLS == nil || len(s.Config.TLS.Certificates) != 1 {
		t.Fatalf("first snapshot: %+v", s.Config.TLS)
	}
	b, _ := pem.Decode([]byte(s.Config.TLS.Certificates[0].CertFile))
	leaf, _ := x509.ParseCertificate(b.Bytes)
	if leaf.SerialNumber.Cmp(serial) != 0 {
		t.Errorf("published serial %x, want the imported %x", leaf.SerialNumber, serial)
	}
	m.Observe(&providers.Merged{Config: &config.Configuration{HTTP: &config.HTTPConfiguration{Routers: map[string]*config.Router{
		"c@docker": {RouterCommon: config.RouterCommon{Rule: "Host(`c.example.com`) || Host(`www.c.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le"}},
	}}}})
	var wg sync.WaitGroup
	m.reconcile(ctx, &wg) // as Run does on the wake-up
	wg.Wait()
	certs := m.Certificates()
	if len(certs) != 1 || certs[0].State != "valid" || certs[0].Serial != serial.Text(16) {
		t.Errorf("Certificates: %+v, want the imported one valid", certs)
	}
	m.mu.Lock()
	for k, o := range m.orders {
		t.Errorf("order %s started (%+v) for an imported valid certificate", k, o)
	}
	m.mu.Unlock()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stored, _ := kv.Get(context.Background(), kvBucket, "le")
	if !strings.Contains(string(stored), "c.example.com") {
		t.Errorf("store holds %q, want the imported data", stored)
	}
	// Second start: the store wins; the file is not read again.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	m2 := newTestManager(t, map[string]*static.ACME{"le": {CAServer: "https://127.0.0.1:1/dir", Storage: path, TLSChallenge: &static.TLSChallenge{}}}, kv)
	m2.loadAll(context.Background())
	if len(m2.held["le"]) != 1 {
		t.Errorf("after restart: %d certificates held, want 1 from the store", len(m2.held["le"]))
	}
}

// A failed order is a live problem naming resolver, domain, the error and
// what serves; the certificate status says "failed".
func TestFailedOrderIsAProblem(t *testing.T) {
	m := newTestManager(t, map[string]*static.ACME{"le": {CAServer: "https://127.0.0.1:1/dir", TLSChallenge: &static.TLSChallenge{}}}, &memKV{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, func(providers.Snapshot) {}) }()
	m.Observe(&providers.Merged{Config: &config.Configuration{HTTP: &config.HTTPConfiguration{Routers: map[string]*config.Router{
		"d@file": {RouterCommon: config.RouterCommon{Rule: "Host(`d.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le"}},
	}}}})
	deadline := time.Now().Add(20 * time.Second)
	var ps []providers.Problem
	for time.Now().Before(deadline) {
		if ps = m.Problems(); len(ps) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 {
		t.Fatalf("problems: %+v, want 1", ps)
	}
	p := ps[0]
	if p.Source != "certificatesResolvers.le" || !reflect.DeepEqual(p.Objects, []string{"router d@file"}) ||
		!strings.Contains(p.Message, "domain d.example.com: certificate order failed (1 attempts") ||
		!strings.Contains(p.Message, "connection refused") || !strings.Contains(p.Message, "generated default certificate serves") {
		t.Errorf("problem: %+v", p)
	}
	if cs := m.Certificates(); len(cs) != 1 || cs[0].State != "failed" || cs[0].NextAttempt.IsZero() {
		t.Errorf("Certificates: %+v", cs)
	}
}

// exportFile updates one resolver's entry of a Traefik acme.json, keeps
// the others, and leaves the file mode 0600 even when it was 0644.
func TestExportFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acme.json")
	if err := os.WriteFile(path, []byte(`{"other": {"Account": null, "Certificates": []}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cert, key, _ := selfSigned(t, time.Hour, "x.example.com")
	if err := exportFile(path, "le", &Data{Certificates: []*Cert{{Domain: config.Domain{Main: "x.example.com"}, Certificate: cert, Key: key, Store: "default"}}}); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %o, want 600", st.Mode().Perm())
	}
	d, _, err := importFile(path, "le")
	if err != nil || d == nil || len(d.Certificates) != 1 || d.Certificates[0].Domain.Main != "x.example.com" {
		t.Fatalf("read back: %+v, %v", d, err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"other"`) {
		t.Errorf("other resolver's entry dropped: %s", b)
	}
	if err := os.WriteFile(path, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exportFile(path, "le", &Data{}); err == nil {
		t.Errorf("a file that is not acme.json was overwritten")
	}
}

// Case 054: a directory at the storage path (what Docker makes of a
// bind-mounted acme.json that did not exist) is a problem naming it — it
// is never chmod'ed (0600 would take its search bit), read or written —
// and every failed write of the storage file stands in Problems, not only
// in the log; certificates still go to Gantry's store.
func TestStorageDirectoryIsAProblemNeverChmoded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "acme.json")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	kv := &memKV{}
	m := newTestManager(t, map[string]*static.ACME{"le": {Storage: dir, HTTPChallenge: &static.HTTPChallenge{EntryPoint: "web"}}}, kv)
	m.loadAll(context.Background())
	problems := func() string {
		var msgs []string
		for _, p := range m.Problems() {
			msgs = append(msgs, p.Source+": "+p.Message)
		}
		return strings.Join(msgs, "\n")
	}
	if all := problems(); !strings.Contains(all, dir+" is a directory, not an acme.json file: left alone") {
		t.Errorf("problems after load lack the directory; got:\n%s", all)
	}
	cert, key, _ := selfSigned(t, time.Hour, "st.example.com")
	m.mu.Lock()
	m.data["le"].Certificates = []*Cert{{Domain: config.Domain{Main: "st.example.com"}, Certificate: cert, Key: key, Store: "default"}}
	m.mu.Unlock()
	m.persist(context.Background(), m.resolvers["le"])
	all := problems()
	if !strings.Contains(all, "certificatesResolvers.le.acme.storage: write the storage file: "+dir+" is a directory") {
		t.Errorf("problems after a save lack the failed write; got:\n%s", all)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || st.Mode().Perm() != 0o755 {
		t.Errorf("storage directory after load and save: %v %v, want it untouched (0755)", st.Mode(), err)
	}
	if d, err := load(context.Background(), kv, "le"); err != nil || d == nil || len(d.Certificates) != 1 {
		t.Errorf("the store lacks the certificate: %+v %v", d, err)
	}
}

// A CA that forgot the account (accountDoesNotExist): the account saved
// with that registration marked stale replaces the stored one still
// registered there, so the next order registers again (locally, and for
// every instance of a shared store); a stale mark for another
// registration (another instance already registered again) leaves the
// stored, newer registration in place.
func TestMergeForgottenRegistration(t *testing.T) {
	reg := func(uri string) *Account {
		return &Account{Email: "a@example.com", Registration: &Registration{URI: uri}}
	}
	old, fresh := "https://ca.test/acct/1", "https://ca.test/acct/2"
	forgotten := &Account{Email: "a@example.com", stale: old}

	if got := merge(&Data{Account: reg(old)}, &Data{Account: forgotten}).Account; got.Registration != nil {
		t.Errorf("stored registration %s kept after the CA forgot it", got.Registration.URI)
	}
	if got := merge(&Data{Account: reg(fresh)}, &Data{Account: forgotten}).Account; got.Registration == nil || got.Registration.URI != fresh {
		t.Errorf("another instance's new registration replaced: %+v", got.Registration)
	}
	if got := merge(&Data{Account: reg(old)}, &Data{Account: reg(fresh)}).Account; got.Registration.URI != old {
		t.Errorf("without a stale mark the stored account must win (instances converge): got %s", got.Registration.URI)
	}
}
