package k8s

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ClientOptions are the connection options every Kubernetes provider of
// Traefik has.
// Source: https://doc.traefik.io/traefik/providers/kubernetes-ingress/#endpoint
type ClientOptions struct {
	// Endpoint is the API server URL ("https://host:port"); required
	// outside a pod without $KUBECONFIG, optional in a pod (overrides the
	// host).
	Endpoint string
	// Token is a bearer token, or the path of a file holding one (read
	// once at start).
	Token string
	// CertAuthFilePath is a PEM CA bundle to verify the API server with.
	CertAuthFilePath string
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

// Client is a connection to the API server: the typed clientset, the
// configuration (for other clientsets: dynamic, Gateway API), and the
// Health its requests feed.
type Client struct {
	Config    *rest.Config
	Clientset kubernetes.Interface
	Health    *Health
}

// NewClient makes the configuration o selects, wraps its transport so that
// every request reports to a new Health, and builds the clientset. It does
// not contact the API server.
func NewClient(o ClientOptions) (*Client, error) {
	cfg, err := RESTConfig(o)
	if err != nil {
		return nil, err
	}
	h := newHealth(cfg.Host)
	cfg.Wrap(h.wrap)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", cfg.Host, err)
	}
	return &Client{Config: cfg, Clientset: cs, Health: h}, nil
}
