package dashboard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
)

// Redacted replaces every secret value in API responses.
const Redacted = "REDACTED"

// secretKeys are JSON keys whose string values are secrets wherever they
// appear: TLS private keys (tls.certificates[].keyFile, forwardAuth.tls.key,
// serversTransports.*.certificates[].keyFile, stores' default certificates),
// provider credentials (Consul token, Docker and Consul httpAuth passwords).
var secretKeys = map[string]bool{
	"key": true, "keyfile": true, "password": true, "token": true,
	"secret": true, "apikey": true, "privatekey": true, "clientsecret": true,
}

// secretHeader reports whether a header (in customRequestHeaders,
// customResponseHeaders or healthCheck.headers) carries credentials.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return strings.Contains(n, "token") || strings.Contains(n, "secret") ||
		strings.Contains(n, "password") || strings.Contains(n, "api-key") || strings.Contains(n, "apikey")
}

// urlPassword matches the password of a URL's userinfo ("//user:pass@").
var urlPassword = regexp.MustCompile(`(//[^/\s:@"]*):[^/\s@"]*@`)

// queryToken matches credential query parameters ("?token=…", Consul's
// "&token=…", "access_token", "api_key", "password", "secret").
var queryToken = regexp.MustCompile(`(?i)([?&](?:token|access_token|api_key|apikey|password|secret)=)[^&\s"']*`)

// RedactString hides passwords in URLs inside s ("http://u:REDACTED@h") and
// credential query parameters ("?token=REDACTED").
func RedactString(s string) string {
	if strings.Contains(s, "@") {
		s = urlPassword.ReplaceAllString(s, "${1}:"+Redacted+"@")
	}
	if strings.Contains(s, "=") {
		s = queryToken.ReplaceAllString(s, "${1}"+Redacted)
	}
	return s
}

// redact walks a decoded JSON value and replaces secrets in place:
//   - values under secretKeys;
//   - users lists (basicAuth, digestAuth, api users) keep the user name
//     and lose the hash: "alice:REDACTED", "alice:realm:REDACTED";
//   - header maps: credential-bearing headers;
//   - passwords inside URLs in every string.
func redact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if rk := RedactString(k); rk != k { // serverStatus is keyed by server URL
				delete(x, k)
				x[rk] = val
				k = rk
			}
			lk := strings.ToLower(k)
			switch {
			case secretKeys[lk]:
				if s, ok := val.(string); ok && s != "" {
					x[k] = Redacted
					continue
				}
			case lk == "users":
				if list, ok := val.([]any); ok {
					for i, u := range list {
						if s, ok := u.(string); ok {
							list[i] = redactUser(s)
						}
					}
					continue
				}
			case lk == "customrequestheaders" || lk == "customresponseheaders" || lk == "headers":
				if m, ok := val.(map[string]any); ok {
					for h, hv := range m {
						if _, isStr := hv.(string); isStr && secretHeader(h) {
							m[h] = Redacted
						}
					}
				}
			}
			x[k] = redact(val)
		}
		return x
	case []any:
		for i := range x {
			x[i] = redact(x[i])
		}
		return x
	case string:
		return RedactString(x)
	}
	return v
}

func redactUser(s string) string {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return Redacted
	}
	return s[:i+1] + Redacted
}

// marshalRedacted encodes v as indented-free JSON with every secret redacted.
func marshalRedacted(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return json.Marshal(redact(generic))
}

// writeJSON writes v redacted, with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := marshalRedacted(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encode response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}

// apiError is Traefik's error body: {"message": "..."}.
type apiError struct {
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	body, _ := json.Marshal(apiError{Message: RedactString(msg)})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}
