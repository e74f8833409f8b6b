package middleware

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// digestNonceTTL is how long a server nonce stays valid; a request with an
// older one gets a new challenge with stale=true, so the client retries
// without asking the user again (RFC 7616 §3.3).
const digestNonceTTL = 5 * time.Minute

// newDigestAuth checks RFC 7616 Digest credentials (algorithm MD5, qop
// "auth" or none) against c.Users and c.UsersFile, whose lines are
// "user:realm:HA1" with HA1 = hex(MD5(user:realm:password)), as written by
// Apache's htdigest; only lines of the middleware's realm (default
// "traefik") count. Nonces are stateless (a timestamp signed with a key
// made per configuration generation) and expire after digestNonceTTL.
// Failures answer 401 with a Digest challenge; headerField and
// removeHeader work as for basicAuth.
// Source: https://doc.traefik.io/traefik/middlewares/http/digestauth/
func newDigestAuth(c *config.DigestAuth) (Middleware, error) {
	entries, err := loadAuthEntries(c.Users, c.UsersFile)
	if err != nil {
		return nil, err
	}
	realm := c.Realm
	if realm == "" {
		realm = defaultRealm
	}
	d := &digest{realm: realm, users: map[string]string{}, headerField: http.CanonicalHeaderKey(c.HeaderField), remove: c.RemoveHeader}
	for _, e := range entries {
		parts := strings.Split(e.line, ":")
		if len(parts) != 3 || parts[0] == "" {
			return nil, errField(e.field, "want user:realm:hash")
		}
		if b, err := hex.DecodeString(parts[2]); err != nil || len(b) != md5.Size {
			return nil, errField(e.field, "user %s: hash is not 32 hex digits (MD5 of user:realm:password)", parts[0])
		}
		if parts[1] == realm {
			d.users[parts[0]] = strings.ToLower(parts[2])
		}
	}
	if _, err := rand.Read(d.key[:]); err != nil {
		return nil, err
	}
	return d.wrap, nil
}

type digest struct {
	realm       string
	users       map[string]string // user -> HA1 hex
	key         [32]byte
	headerField string
	remove      bool
}

func (d *digest) nonce(now time.Time) string {
	var b [8 + sha256.Size]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixNano()))
	m := hmac.New(sha256.New, d.key[:])
	m.Write(b[:8])
	copy(b[8:], m.Sum(nil))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// nonceState returns whether n was made by d and whether it is still fresh.
func (d *digest) nonceState(n string, now time.Time) (valid, fresh bool) {
	b, err := base64.RawURLEncoding.DecodeString(n)
	if err != nil || len(b) != 8+sha256.Size {
		return false, false
	}
	m := hmac.New(sha256.New, d.key[:])
	m.Write(b[:8])
	if !hmac.Equal(m.Sum(nil), b[8:]) {
		return false, false
	}
	t := time.Unix(0, int64(binary.BigEndian.Uint64(b[:8])))
	return true, now.Sub(t) < digestNonceTTL
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// parseDigest parses the parameters of an "Authorization: Digest …" header.
func parseDigest(h string) map[string]string {
	rest, ok := strings.CutPrefix(h, "Digest ")
	if !ok {
		return nil
	}
	out := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimLeft(strings.TrimSpace(rest), ",") {
		rest = strings.TrimSpace(rest)
		k, v, ok := strings.Cut(rest, "=")
		if !ok {
			return nil
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, `"`) {
			end := 1
			for end < len(v) && v[end] != '"' {
				if v[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(v) {
				return nil
			}
			out[k] = strings.ReplaceAll(v[1:end], `\"`, `"`)
			rest = v[end+1:]
			continue
		}
		val, tail, _ := strings.Cut(v, ",")
		out[k] = strings.TrimSpace(val)
		rest = tail
	}
	return out
}

func (d *digest) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		p := parseDigest(r.Header.Get("Authorization"))
		user, ok, stale := d.check(r, p, now)
		if !ok {
			ch := `Digest realm="` + d.realm + `", nonce="` + d.nonce(now) + `", opaque="` + md5hex(d.realm) + `", algorithm=MD5, qop="auth"`
			if stale {
				ch += ", stale=true"
			}
			w.Header().Set("WWW-Authenticate", ch)
			http.Error(w, "401 Unauthorized", http.StatusUnauthorized)
			return
		}
		if d.headerField != "" {
			r.Header.Set(d.headerField, user)
		}
		if d.remove {
			r.Header.Del("Authorization")
		}
		next.ServeHTTP(w, r)
	})
}

// check verifies the digest response; stale reports a correct response
// made with an expired nonce.
func (d *digest) check(r *http.Request, p map[string]string, now time.Time) (user string, ok, stale bool) {
	if p == nil {
		return "", false, false
	}
	user = p["username"]
	ha1, known := d.users[user]
	if !known || p["realm"] != d.realm || p["uri"] != requestURI(r) {
		return "", false, false
	}
	if alg := p["algorithm"]; alg != "" && !strings.EqualFold(alg, "MD5") {
		return "", false, false
	}
	valid, fresh := d.nonceState(p["nonce"], now)
	if !valid {
		return "", false, false
	}
	ha2 := md5hex(r.Method + ":" + p["uri"])
	var want string
	switch p["qop"] {
	case "auth":
		want = md5hex(ha1 + ":" + p["nonce"] + ":" + p["nc"] + ":" + p["cnonce"] + ":auth:" + ha2)
	case "":
		want = md5hex(ha1 + ":" + p["nonce"] + ":" + ha2)
	default:
		return "", false, false
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(p["response"]))) != 1 {
		return "", false, false
	}
	if !fresh {
		return "", false, true
	}
	return user, true, false
}
