package dashboard

import (
	"bytes"
	"encoding/json"
	"expvar"
	"fmt"
	"io"
	"net/http"
	"os"
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
// customResponseHeaders or healthCheck.headers) carries credentials: the
// standard credential headers, and any name containing auth, token, secret,
// passw, cookie, session, credential, signature, api-key or apikey
// ("X-Internal-Auth", "X-Auth-Token", "X-Api-Key").
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, w := range []string{"auth", "token", "secret", "passw", "cookie", "session", "credential", "signature", "api-key", "apikey", "api_key"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// secretOption reports whether a static option's value is a secret, by the
// last segment of its dotted name: the secretKeys, users, and ACME's
// eab.hmacEncoded.
func secretOption(key string) bool {
	k := strings.ToLower(key)
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	return secretKeys[k] || k == "hmacencoded" || k == "users"
}

// RedactArgs returns a command line with secret option values redacted by
// the rules of the API: "--providers.consul.token=REDACTED" (also in the
// two-argument form "--providers.consul.token" "x"), "--api.users=alice:REDACTED",
// passwords in URLs and credential query parameters. args is not modified.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	secretNext := false
	for i, a := range args {
		if secretNext && !strings.HasPrefix(a, "-") {
			out[i], secretNext = Redacted, false
			continue
		}
		secretNext = false
		name, val, hasVal := strings.Cut(a, "=")
		opt := strings.TrimLeft(name, "-")
		switch {
		case !strings.HasPrefix(name, "-") || opt == "":
			out[i] = RedactString(a)
		case secretOption(opt) && !hasVal:
			out[i], secretNext = a, true
		case secretOption(opt) && strings.HasSuffix(strings.ToLower(opt), "users"):
			users := strings.Split(val, ",")
			for j, u := range users {
				users[j] = redactUser(u)
			}
			out[i] = name + "=" + strings.Join(users, ",")
		case secretOption(opt):
			out[i] = name + "=" + Redacted
		default:
			out[i] = RedactString(a)
		}
	}
	return out
}

// redactedCmdline is /debug/pprof/cmdline (api.debug) with RedactArgs
// applied: NUL-separated, as net/http/pprof writes it.
func redactedCmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, strings.Join(RedactArgs(os.Args), "\x00"))
}

// redactedVars is /debug/vars (api.debug): expvar's handler with the
// "cmdline" variable passed through RedactArgs.
func redactedVars(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	var b strings.Builder
	b.WriteString("{\n")
	first := true
	expvar.Do(func(kv expvar.KeyValue) {
		if !first {
			b.WriteString(",\n")
		}
		first = false
		v := kv.Value.String()
		if kv.Key == "cmdline" {
			if enc, err := json.Marshal(RedactArgs(os.Args)); err == nil {
				v = string(enc)
			}
		}
		fmt.Fprintf(&b, "%q: %s", kv.Key, v)
	})
	b.WriteString("\n}\n")
	_, _ = io.WriteString(w, b.String())
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
