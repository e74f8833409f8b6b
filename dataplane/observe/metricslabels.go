package observe

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gantry-proxy/gantry/dataplane/httpwire"
)

// connProtocolLabel is traefik_open_connections' protocol: "TCP" for HTTP
// and HTTPS connections, others upper-cased ("UDP").
func connProtocolLabel(protocol string) string {
	label := strings.ToUpper(protocol)
	if label == "HTTP" || label == "HTTPS" || label == "" {
		label = "TCP"
	}
	return label
}

// methodLabel bounds the method label's cardinality as Traefik does.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace, "PRI":
		return m
	}
	if !utf8.ValidString(m) {
		return "NON_UTF8_HTTP_METHOD"
	}
	return "EXTENSION_METHOD"
}

const (
	protoHTTP      = "http"
	protoWebSocket = "websocket"
	protoSSE       = "sse"
	protoGRPC      = "grpc"
	protoGRPCWeb   = "grpc-web"
)

// protocolLabel is Traefik's protocol label, from the request headers.
func protocolLabel(h http.Header) string {
	if h == nil {
		return protoHTTP
	}
	switch ct := headerValue(h, "Content-Type"); {
	case httpwire.HasToken(h["Connection"], "upgrade") && httpwire.HasToken(h["Upgrade"], "websocket"):
		return protoWebSocket
	case httpwire.HasToken(h["Accept"], "text/event-stream"):
		return protoSSE
	case strings.HasPrefix(ct, "application/grpc-web"):
		return protoGRPCWeb
	case strings.HasPrefix(ct, "application/grpc"):
		return protoGRPC
	}
	return protoHTTP
}

// grpcCode is the gRPC status of a response (Grpc-Status header or
// trailer), 2 (Unknown) when absent or not a number, as in Traefik.
func grpcCode(h http.Header) int {
	v := headerValue(h, "Grpc-Status")
	if v == "" {
		v = headerValue(h, http.TrailerPrefix+"Grpc-Status")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 2
	}
	return n
}

// TLSVersionLabel is Traefik's tls_version label ("1.3", "unknown").
func TLSVersionLabel(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "1.0"
	case tls.VersionTLS11:
		return "1.1"
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return "unknown"
}

// TLSCipherLabel is Traefik's tls_cipher label: the suite's IANA name.
func TLSCipherLabel(c uint16) string {
	name := tls.CipherSuiteName(c)
	if strings.HasPrefix(name, "0x") {
		return "unknown"
	}
	return name
}

var serverUpDesc = prometheus.NewDesc("traefik_service_server_up", "service server is up, described by gauge value of 0 or 1.", []string{"service", "url"}, nil)

type serverUpCollector struct{ list func() []ServerUp }

func (c *serverUpCollector) Describe(ch chan<- *prometheus.Desc) { ch <- serverUpDesc }

func (c *serverUpCollector) Collect(ch chan<- prometheus.Metric) {
	eachServerUp(c.list(), func(s ServerUp, v float64) {
		ch <- prometheus.MustNewConstMetric(serverUpDesc, prometheus.GaugeValue, v, s.Service, s.URL)
	})
}

// eachServerUp calls f once per distinct (service, url) of list (the first
// one listed wins) with the gauge's value: 1 up, 0 down.
func eachServerUp(list []ServerUp, f func(s ServerUp, v float64)) {
	seen := map[[2]string]bool{}
	for _, s := range list {
		k := [2]string{s.Service, s.URL}
		if seen[k] {
			continue
		}
		seen[k] = true
		v := 0.0
		if s.Up {
			v = 1
		}
		f(s, v)
	}
}

var certDesc = prometheus.NewDesc("traefik_tls_certs_not_after", "Certificate expiration timestamp", []string{"cn", "serial", "sans"}, nil)

type certCollector struct{ list func() []*x509.Certificate }

func (c *certCollector) Describe(ch chan<- *prometheus.Desc) { ch <- certDesc }

func (c *certCollector) Collect(ch chan<- prometheus.Metric) {
	eachCert(c.list(), func(cert *x509.Certificate, k [3]string) {
		ch <- prometheus.MustNewConstMetric(certDesc, prometheus.GaugeValue, float64(cert.NotAfter.Unix()), k[0], k[1], k[2])
	})
}

// eachCert calls f once per distinct certLabels (cn, serial, sans) of the
// non-nil certificates of list, the first one listed winning.
func eachCert(list []*x509.Certificate, f func(cert *x509.Certificate, labels [3]string)) {
	seen := map[[3]string]bool{}
	for _, cert := range list {
		if cert == nil {
			continue
		}
		k := certLabels(cert)
		if seen[k] {
			continue
		}
		seen[k] = true
		f(cert, k)
	}
}

func ipStrings(c *x509.Certificate) []string {
	out := make([]string, 0, len(c.IPAddresses))
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}
