package harness

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Versions scripts/setup/kubernetes.sh builds.
const (
	KubeVersion = "1.37.2"
	EtcdVersion = "3.7.3"
)

// KubeReadyTimeout bounds how long StartKube waits for etcd and then the
// API server to report ready (about 5 s on an idle machine).
const KubeReadyTimeout = 3 * time.Minute

// KubeDir returns the directory holding etcd, kube-apiserver and kubectl:
// $GANTRY_KUBE_DIR, else the setup script's cache
// ($XDG_CACHE_HOME or $HOME/.cache)/gantry/kube-<v>-etcd-<v>. Missing
// binaries are MissingTool.
func KubeDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("GANTRY_KUBE_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			MissingTool(t, fmt.Sprintf("kube-apiserver not built: run scripts/setup/kubernetes.sh (%v)", err))
		}
		dir = filepath.Join(cache, "gantry", "kube-"+KubeVersion+"-etcd-"+EtcdVersion)
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			MissingTool(t, fmt.Sprintf("%s not built: run scripts/setup/kubernetes.sh (looked in $GANTRY_KUBE_DIR and %s)", b, dir))
		}
	}
	return dir
}

// Kube is a running etcd + kube-apiserver pair (no controller manager, no
// kubelet: nothing writes EndpointSlices, deletes namespaces or collects
// garbage; tests write what they need).
type Kube struct {
	// BinDir holds etcd, kube-apiserver and kubectl.
	BinDir string
	// Dir holds the certificates, the kubeconfig and etcd's data.
	Dir string
	// URL is the API server's address, "https://127.0.0.1:port".
	URL string
	// CAFile is the PEM CA that signed the API server's certificate
	// (the value of a provider's certAuthFilePath).
	CAFile string
	// Token is a bearer token in group system:masters.
	Token string
	// Kubeconfig is a kubeconfig file for kubectl and client-go.
	Kubeconfig string
	// Config is a client configuration with Token; Client and Dynamic use it.
	Config  *rest.Config
	Client  kubernetes.Interface
	Dynamic dynamic.Interface

	certs   *kubeCerts
	etcd    *Process
	api     *Process
	apiArgs []string
	apiPort int
}

// StartKube starts etcd and kube-apiserver on free loopback ports with
// their data in a temporary directory, waits until /readyz answers ok, and
// stops both when t ends. In a suite run with MainNetns, they live in the
// suite's own network namespace.
func StartKube(t testing.TB) *Kube {
	t.Helper()
	k := &Kube{BinDir: KubeDir(t), Dir: t.TempDir(), Token: "gantry-admin-token"}
	certs, err := writeKubeCerts(k.Dir, k.Token)
	if err != nil {
		t.Fatalf("harness: kube certificates: %v", err)
	}
	k.certs, k.CAFile = certs, certs.CAFile
	client, peer := FreePort(t), FreePort(t)
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	k.etcd = startKubeProcess(t, "etcd", k.Dir, filepath.Join(k.BinDir, "etcd"), []string{
		"--name", "t", "--data-dir", filepath.Join(k.Dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "t=" + peerURL, "--initial-cluster-state", "new",
		"--unsafe-no-fsync", "--log-level", "warn",
	})
	Try(t, KubeReadyTimeout, func() error {
		return k.checkGet(k.etcd, etcdURL+"/health", nil, `"health":"true"`)
	})
	k.apiPort = FreePort(t)
	k.URL = "https://127.0.0.1:" + strconv.Itoa(k.apiPort)
	k.apiArgs = []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(k.apiPort), "--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--tls-cert-file=" + certs.CertFile, "--tls-private-key-file=" + certs.KeyFile,
		"--client-ca-file=" + certs.CAFile,
		"--token-auth-file=" + certs.TokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + certs.SAPub, "--service-account-signing-key-file=" + certs.SAKey,
		"--service-cluster-ip-range=10.0.0.0/16", // room for the scale benchmark's 5 000 Services
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		"--profiling=false",
		"--cert-dir=" + filepath.Join(k.Dir, "apiserver-certs"),
	}
	k.StartAPIServer(t)
	k.Config = &rest.Config{Host: k.URL, BearerToken: k.Token, TLSClientConfig: rest.TLSClientConfig{CAFile: k.CAFile},
		QPS: 1000, Burst: 2000}
	if k.Client, err = kubernetes.NewForConfig(k.Config); err != nil {
		t.Fatalf("harness: kube client: %v", err)
	}
	if k.Dynamic, err = dynamic.NewForConfig(k.Config); err != nil {
		t.Fatalf("harness: kube dynamic client: %v", err)
	}
	k.Kubeconfig = filepath.Join(k.Dir, "kubeconfig")
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster: {server: %q, certificate-authority: %q}\n"+
		"users:\n- name: admin\n  user: {token: %q}\ncontexts:\n- name: local\n  context: {cluster: local, user: admin}\ncurrent-context: local\n",
		k.URL, k.CAFile, k.Token)
	if err := os.WriteFile(k.Kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatalf("harness: write kubeconfig: %v", err)
	}
	return k
}

// StopAPIServer stops kube-apiserver (SIGTERM, then kill), leaving etcd
// and everything stored running: clients see an outage until
// StartAPIServer.
func (k *Kube) StopAPIServer(t testing.TB) {
	t.Helper()
	if k.api != nil {
		k.api.Stop(t)
	}
}

// StartAPIServer (re)starts kube-apiserver on the same port with the same
// certificates and etcd, and waits until /readyz answers ok.
func (k *Kube) StartAPIServer(t testing.TB) {
	t.Helper()
	if k.api != nil {
		if _, exited := k.api.ExitCode(); !exited {
			t.Fatalf("harness: kube-apiserver is already running")
		}
	}
	k.api = startKubeProcess(t, "kube-apiserver", k.Dir, filepath.Join(k.BinDir, "kube-apiserver"), k.apiArgs)
	pool := x509.NewCertPool()
	pool.AddCert(k.certs.CA)
	Try(t, KubeReadyTimeout, func() error { return k.checkGet(k.api, k.URL+"/readyz", pool, "ok") })
}

// APIServer is the running kube-apiserver process.
func (k *Kube) APIServer() *Process { return k.api }

// checkGet GETs url (trusting roots for https) and wants a 200 whose body
// contains want; p exiting is a Permanent error.
func (k *Kube) checkGet(p *Process, url string, roots *x509.CertPool, want string) error {
	if code, exited := p.ExitCode(); exited {
		return Permanent(fmt.Errorf("%s exited with code %d", p.Name, code))
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(b.String(), want) {
		return fmt.Errorf("%s: %s %.200q", url, resp.Status, b.String())
	}
	return nil
}

// Kubectl runs kubectl against the API server with args and returns its
// standard output; a non-zero exit fails t with stderr.
func (k *Kube) Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := k.KubectlIn("", args...)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	return out
}

// KubectlIn runs kubectl with stdin and args and returns its standard
// output, or an error holding the command, the exit status and stderr.
func (k *Kube) KubectlIn(stdin string, args ...string) (string, error) {
	all := append([]string{"--kubeconfig", k.Kubeconfig}, args...)
	cmd := exec.Command(filepath.Join(k.BinDir, "kubectl"), all...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// Apply applies the YAML manifests in doc (one or more documents) with
// `kubectl apply --server-side --force-conflicts`, failing t on error.
func (k *Kube) Apply(t testing.TB, doc string) string {
	t.Helper()
	out, err := k.ApplyErr(doc)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	return out
}

// ApplyErr is Apply returning kubectl's error (a refused object) instead
// of failing the test.
func (k *Kube) ApplyErr(doc string) (string, error) {
	return k.KubectlIn(doc, "apply", "--server-side", "--force-conflicts", "--field-manager", "gantry-test", "-f", "-")
}

// TestCert issues a serving certificate for names signed by the test CA
// (CAFile), returning PEM certificate and key, e.g. for a TLS Secret.
func (k *Kube) TestCert(t testing.TB, names ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	var ips []net.IP
	var dns []string
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, n)
		}
	}
	c, key, err := signServing(k.certs.CA, k.certs.CAKey, names[0], dns, ips)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	return c, key
}

// startKubeProcess is startProcess for the control plane: the process is
// killed if the test process dies, so an aborted run leaves no etcd or
// kube-apiserver behind.
func startKubeProcess(t testing.TB, name, dir, bin string, args []string) *Process {
	t.Helper()
	return startProcessAttr(t, name, dir, bin, args, nil, deathSignal())
}
