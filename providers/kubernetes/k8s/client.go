package k8s

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/gantry-proxy/gantry/config/static"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
)

// ClientOptions are the connection options every Kubernetes provider of
// Traefik has (static.KubernetesAPI: endpoint, token, certAuthFilePath)
// and the client's own.
type ClientOptions struct {
	static.KubernetesAPI
	// UserAgent names the provider in the API server's logs.
	UserAgent string
	// Kubeconfig is a kubeconfig file to use before any other source
	// (gantry migrate's --kubeconfig); "" for the order above.
	Kubeconfig string
}

// In-cluster locations (variables so that tests can point them elsewhere).
var (
	inClusterTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	inClusterCAFile    = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
)

// RESTConfig returns the client configuration o selects (see the package
// doc for the order: Kubeconfig, in-cluster, $KUBECONFIG, endpoint). Errors name the
// option or file at fault.
func RESTConfig(o ClientOptions) (*rest.Config, error) {
	var cfg *rest.Config
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	switch {
	case o.Kubeconfig != "":
		c, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", o.Kubeconfig, err)
		}
		cfg = c
	case host != "" && port != "":
		tok, err := os.ReadFile(inClusterTokenFile)
		if err != nil {
			return nil, fmt.Errorf("in-cluster configuration (KUBERNETES_SERVICE_HOST is set): service account token: %w", err)
		}
		if _, err := os.Stat(inClusterCAFile); err != nil {
			return nil, fmt.Errorf("in-cluster configuration (KUBERNETES_SERVICE_HOST is set): service account CA: %w", err)
		}
		cfg = &rest.Config{
			Host:            "https://" + net.JoinHostPort(host, port),
			BearerToken:     strings.TrimSpace(string(tok)),
			BearerTokenFile: inClusterTokenFile, // re-read as it is rotated
			TLSClientConfig: rest.TLSClientConfig{CAFile: inClusterCAFile},
		}
		if o.Endpoint != "" {
			cfg.Host = o.Endpoint
		}
	case os.Getenv("KUBECONFIG") != "" && o.Endpoint == "":
		c, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
		if err != nil {
			return nil, fmt.Errorf("KUBECONFIG %s: %w", os.Getenv("KUBECONFIG"), err)
		}
		cfg = c
	default:
		if o.Endpoint == "" {
			return nil, errors.New("endpoint: required outside a pod (KUBERNETES_SERVICE_HOST unset) without KUBECONFIG")
		}
		cfg = &rest.Config{Host: o.Endpoint}
		if o.CertAuthFilePath != "" {
			ca, err := os.ReadFile(o.CertAuthFilePath)
			if err != nil {
				return nil, fmt.Errorf("certAuthFilePath: %w", err)
			}
			cfg.TLSClientConfig = rest.TLSClientConfig{CAData: ca}
		}
	}
	if o.Token != "" {
		tok, err := readToken(o.Token)
		if err != nil {
			return nil, fmt.Errorf("token: %w", err)
		}
		cfg.BearerToken, cfg.BearerTokenFile = tok, ""
	}
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("endpoint %q: want https://host:port", cfg.Host)
	}
	cfg.UserAgent = o.UserAgent
	// The providers read a few kinds and write Ingress status; client-go's
	// default 5 QPS would make a publishedService status sweep over
	// thousands of Ingresses take minutes.
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// readToken returns s itself, or the content of the file s names when s
// looks like a path of an existing file (Traefik's FileOrContent).
func readToken(s string) (string, error) {
	if strings.ContainsAny(s, "/\\") {
		if b, err := os.ReadFile(s); err == nil {
			return strings.TrimSpace(string(b)), nil
		} else if !os.IsNotExist(err) {
			return "", err
		}
	}
	return s, nil
}

// Client is a connection to the API server: its configuration (for
// other clients, e.g. dynamic), one REST client per group version of the
// minimal scheme (for Kind.Client and Kind.Informer), and the Health its
// requests feed. It never loads client-go's kubernetes/scheme.
type Client struct {
	Config *rest.Config
	Health *Health

	codecs *codecs
	rest   map[schema.GroupVersion]rest.Interface
}

// NewClient makes the configuration o selects, wraps its transport so that
// every request reports to a new Health, and builds the REST clients. It
// does not contact the API server.
func NewClient(o ClientOptions) (*Client, error) {
	cfg, err := RESTConfig(o)
	if err != nil {
		return nil, err
	}
	return NewClientForConfig(cfg)
}

// NewClientForConfig is NewClient for a configuration made elsewhere (a
// test's API server): it copies cfg, wraps the copy's transport with a new
// Health and builds the REST clients on one HTTP client and one rate
// limiter (cfg.QPS, cfg.Burst), as client-go's clientsets do. Errors name
// the host and what could not be built.
func NewClientForConfig(cfg *rest.Config) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	h := newHealth(cfg.Host)
	cfg.Wrap(h.wrap)
	c := &Client{Config: cfg, Health: h}
	if err := c.build(); err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", cfg.Host, err)
	}
	return c, nil
}

// WithRate returns a client sharing c's configuration and Health with its
// own HTTP client and a rate limiter of qps and burst (the Gateway API
// provider's options).
func (c *Client) WithRate(qps float32, burst int) (*Client, error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = qps, burst
	n := &Client{Config: cfg, Health: c.Health}
	if err := n.build(); err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", cfg.Host, err)
	}
	return n, nil
}

// build makes c's REST clients from c.Config.
func (c *Client) build() error {
	cs, err := minimalScheme()
	if err != nil {
		return err
	}
	cfg := rest.CopyConfig(c.Config)
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		if cfg.Burst <= 0 {
			return fmt.Errorf("burst %d: must be positive when qps is", cfg.Burst)
		}
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("http client: %w", err)
	}
	c.codecs, c.rest = cs, map[schema.GroupVersion]rest.Interface{}
	for _, g := range groupVersions {
		gc := rest.CopyConfig(cfg)
		gv := g.gv
		gc.GroupVersion = &gv
		gc.APIPath = "/apis"
		if gv.Group == "" {
			gc.APIPath = "/api"
		}
		gc.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(cs.scheme, cs.factory).WithoutConversion()
		rc, err := rest.RESTClientForConfigAndClient(gc, hc)
		if err != nil {
			return fmt.Errorf("%s client: %w", gv, err)
		}
		c.rest[gv] = rc
	}
	return nil
}

// core is the REST client of core/v1 (any client can GET an absolute
// path such as /version).
func (c *Client) core() rest.Interface { return c.rest[corev1.SchemeGroupVersion] }

// ServerResources returns the resources the API server serves in group
// version gv (discovery's ServerResourcesForGroupVersion): a NotFound API
// error (apierrors.IsNotFound) when it serves none of that group version.
func (c *Client) ServerResources(ctx context.Context, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	path := "/apis/" + gv.String()
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	l := &metav1.APIResourceList{GroupVersion: gv.String()}
	if err := c.core().Get().AbsPath(path).Do(ctx).Into(l); err != nil {
		return nil, err
	}
	return l, nil
}
