package kubegateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

func strMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := map[string]string{}
	for k, x := range m {
		out[k] = fmt.Sprint(x)
	}
	return out
}

func strList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func intOf(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case int:
		return x
	}
	return 0
}

// captured is the echo's JSON.
type captured struct {
	Path      string              `json:"path"`
	Host      string              `json:"host"`
	Method    string              `json:"method"`
	Headers   map[string][]string `json:"headers"`
	HTTPPort  string              `json:"httpPort"`
	Namespace string              `json:"namespace"`
	Pod       string              `json:"pod"`
}

// check sends one request and compares as the suite's CompareRoundTrip.
func (r *runner) check(c confCase, port int) error {
	req := c.Request
	method := str(req, "Method")
	if method == "" {
		method = "GET"
	}
	path, query, _ := strings.Cut(str(req, "Path"), "?")
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(r.e.ip, strconv.Itoa(port)), Path: path, RawQuery: query}
	var body io.Reader
	if b := str(req, "Body"); b != "" {
		body = strings.NewReader(b)
	}
	hr, err := http.NewRequest(method, u.String(), body)
	if err != nil {
		return err
	}
	if h := str(req, "Host"); h != "" {
		hr.Host = h
	} else if port != 80 {
		hr.Host = net.JoinHostPort(r.e.ip, strconv.Itoa(port))
	} else {
		hr.Host = r.e.ip
	}
	for k, v := range strMap(req["Headers"]) {
		hr.Header[k] = []string{v}
	}
	var set []string
	for k, v := range c.BackendSetResponseHeaders {
		set = append(set, k+":"+v)
	}
	hr.Header["X-Echo-Set-Header"] = []string{strings.Join(set, ",")}
	client := confClient
	if str(req, "Protocol") == "H2C_PRIOR_KNOWLEDGE" {
		client = h2cClient
	}
	resp, err := client.Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))

	want := c.Response
	codes := []int{}
	if l, ok := want["StatusCodes"].([]any); ok {
		for _, x := range l {
			codes = append(codes, intOf(x))
		}
	}
	if sc := intOf(want["StatusCode"]); sc != 0 && !slices.Contains(codes, sc) {
		codes = append(codes, sc)
	}
	if len(codes) == 0 {
		codes = []int{200}
	}
	if !slices.Contains(codes, resp.StatusCode) {
		return fmt.Errorf("status %d, want one of %v (body %.200q)", resp.StatusCode, codes, raw)
	}
	if err := checkResponseHeaders(want, resp.Header); err != nil && (resp.StatusCode == 200 || resp.StatusCode == 204) {
		return err
	}
	switch {
	case resp.StatusCode == 200 || resp.StatusCode == 204:
		return r.checkBackend(c, req, method, resp.StatusCode, raw)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return checkRedirect(c, resp, u)
	}
	return nil
}

func checkResponseHeaders(want map[string]any, got http.Header) error {
	lower := map[string][]string{}
	for k, v := range got {
		lower[strings.ToLower(k)] = v
	}
	ws := func(s string) string {
		if b, _ := want["IgnoreWhitespace"].(bool); b {
			return strings.ReplaceAll(s, " ", "")
		}
		return s
	}
	valid, _ := want["ValidHeaderValues"].(map[string]any)
	for k, vs := range valid {
		a, ok := lower[strings.ToLower(k)]
		if !ok {
			return fmt.Errorf("response header %s missing (have %v)", k, got)
		}
		okv := false
		for _, v := range strList(vs) {
			okv = okv || ws(v) == ws(strings.Join(a, ","))
		}
		if !okv {
			return fmt.Errorf("response header %s = %q, want one of %v", k, strings.Join(a, ","), vs)
		}
	}
	for k, v := range strMap(want["Headers"]) {
		a, ok := lower[strings.ToLower(k)]
		if !ok {
			return fmt.Errorf("response header %s missing (have %v)", k, got)
		}
		if ws(strings.Join(a, ",")) != ws(v) {
			return fmt.Errorf("response header %s = %q, want %q", k, strings.Join(a, ","), v)
		}
	}
	for _, k := range strList(want["AbsentHeaders"]) {
		if v, ok := lower[strings.ToLower(k)]; ok {
			return fmt.Errorf("response header %s = %q, want it absent", k, v)
		}
	}
	return nil
}

func (r *runner) checkBackend(c confCase, req map[string]any, method string, status int, raw []byte) error {
	if status == 204 && len(raw) == 0 {
		return nil
	}
	// As the suite's round tripper: an answer that is not the echo's JSON
	// (a CORS preflight the gateway answers itself) captures nothing but
	// the method, assumed to be the one sent.
	var got captured
	if err := json.Unmarshal(raw, &got); err != nil && len(raw) > 0 {
		return fmt.Errorf("backend answer is not the echo's JSON: %.200q", raw)
	}
	if len(raw) == 0 {
		got.Method = method
	}
	exp := c.ExpectedRequest
	if exp == nil {
		exp = req
	}
	wantMethod := str(exp, "Method")
	if wantMethod == "" {
		wantMethod = "GET"
	}
	if h := str(exp, "Host"); h != "" && h != got.Host {
		return fmt.Errorf("backend host %q, want %q", got.Host, h)
	}
	if p := str(exp, "Path"); p != got.Path {
		return fmt.Errorf("backend path %q, want %q", got.Path, p)
	}
	if wantMethod != got.Method {
		return fmt.Errorf("backend method %q, want %q", got.Method, wantMethod)
	}
	if c.Namespace != got.Namespace {
		return fmt.Errorf("backend namespace %q, want %q", got.Namespace, c.Namespace)
	}
	lower := map[string][]string{}
	for k, v := range got.Headers {
		lower[strings.ToLower(k)] = v
	}
	for k, v := range strMap(exp["Headers"]) {
		a, ok := lower[strings.ToLower(k)]
		if !ok {
			return fmt.Errorf("backend request header %s missing", k)
		}
		if strings.Join(a, ",") != v {
			return fmt.Errorf("backend request header %s = %q, want %q", k, strings.Join(a, ","), v)
		}
	}
	for _, k := range strList(exp["AbsentHeaders"]) {
		if v, ok := lower[strings.ToLower(k)]; ok {
			return fmt.Errorf("backend request header %s = %q, want it absent", k, v)
		}
	}
	if !strings.HasPrefix(got.Pod, c.Backend) {
		return fmt.Errorf("served by pod %q, want backend %q", got.Pod, c.Backend)
	}
	for _, m := range c.MirroredTo {
		mm, _ := m.(map[string]any)
		ref := sub(mm, "BackendRef")
		key := str(ref, "Namespace") + "/" + str(ref, "Name")
		ech := r.echoes[key]
		if ech == nil {
			return fmt.Errorf("mirror backend %s has no echo", key)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !ech.saw(got.Path) {
			if time.Now().After(deadline) {
				return fmt.Errorf("mirror backend %s did not receive %s", key, got.Path)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

func checkRedirect(c confCase, resp *http.Response, reqURL url.URL) error {
	if c.RedirectRequest == nil {
		return nil
	}
	loc, err := resp.Location()
	if err != nil {
		return errors.New("redirect without a Location")
	}
	want := c.RedirectRequest
	host, scheme, path := str(want, "Host"), str(want, "Scheme"), str(want, "Path")
	if host == "" {
		host = loc.Hostname()
	}
	if scheme == "" {
		scheme = reqURL.Scheme
	}
	if path == "" {
		path = reqURL.Path
	}
	if host != loc.Hostname() {
		return fmt.Errorf("redirect host %q, want %q", loc.Hostname(), host)
	}
	port := str(want, "Port")
	switch got := loc.Port(); {
	case port == "" && strings.EqualFold(loc.Scheme, "http") && got != "" && got != "80":
		return fmt.Errorf("redirect port %q, want 80 or none", got)
	case port == "" && strings.EqualFold(loc.Scheme, "https") && got != "" && got != "443":
		return fmt.Errorf("redirect port %q, want 443 or none", got)
	case port != "" && port != got:
		return fmt.Errorf("redirect port %q, want %q", got, port)
	}
	if scheme != loc.Scheme {
		return fmt.Errorf("redirect scheme %q, want %q", loc.Scheme, scheme)
	}
	if path != loc.Path {
		return fmt.Errorf("redirect path %q, want %q", loc.Path, path)
	}
	return nil
}

// h2cClient speaks HTTP/2 without TLS with prior knowledge
// (roundtripper.H2CPriorKnowledgeProtocol).
var h2cClient = func() *http.Client {
	tr := &http.Transport{DisableKeepAlives: true, Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Timeout: 10 * time.Second, Transport: tr, CheckRedirect: confClient.CheckRedirect}
}()
