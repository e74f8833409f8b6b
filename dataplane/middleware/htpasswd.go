package middleware

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// passwordHash is one htpasswd hash: bcrypt ($2y$, $2a$, $2b$), SHA1
// ({SHA}base64) or MD5-crypt ($apr1$ Apache, $1$ FreeBSD), the formats
// Apache's htpasswd writes (https://httpd.apache.org/docs/2.4/misc/password_encryptions.html).
type passwordHash string

// checkHashFormat reports an error for a hash in no supported format.
func checkHashFormat(h string) error {
	switch {
	case strings.HasPrefix(h, "$2y$"), strings.HasPrefix(h, "$2a$"), strings.HasPrefix(h, "$2b$"):
		if _, err := bcrypt.Cost([]byte(h)); err != nil {
			return errors.New("malformed bcrypt hash")
		}
	case strings.HasPrefix(h, "{SHA}"):
		if b, err := base64.StdEncoding.DecodeString(h[5:]); err != nil || len(b) != sha1.Size {
			return errors.New("malformed {SHA} hash")
		}
	case strings.HasPrefix(h, "$apr1$"), strings.HasPrefix(h, "$1$"):
		if strings.Count(h, "$") != 3 {
			return errors.New("malformed MD5-crypt hash")
		}
	default:
		return errors.New("unsupported hash format; want bcrypt ($2y$), SHA1 ({SHA}) or MD5 ($apr1$, $1$)")
	}
	return nil
}

// match reports whether password hashes to h, in constant time for the
// non-bcrypt formats (bcrypt compares in constant time itself).
func (h passwordHash) match(password string) bool {
	s := string(h)
	switch {
	case strings.HasPrefix(s, "$2"):
		return bcrypt.CompareHashAndPassword([]byte(s), []byte(password)) == nil
	case strings.HasPrefix(s, "{SHA}"):
		sum := sha1.Sum([]byte(password))
		return subtle.ConstantTimeCompare([]byte(s[5:]), []byte(base64.StdEncoding.EncodeToString(sum[:]))) == 1
	case strings.HasPrefix(s, "$apr1$"):
		return subtle.ConstantTimeCompare([]byte(s), []byte(md5Crypt(password, s, "$apr1$"))) == 1
	case strings.HasPrefix(s, "$1$"):
		return subtle.ConstantTimeCompare([]byte(s), []byte(md5Crypt(password, s, "$1$"))) == 1
	}
	return false
}

const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// md5Crypt computes Poul-Henning Kamp's MD5-crypt of password with the
// salt found in hash after magic ("$1$" or Apache's "$apr1$"), and returns
// it in the same "magic salt $ digest" form.
func md5Crypt(password, hash, magic string) string {
	salt := strings.TrimPrefix(hash, magic)
	if i := strings.IndexByte(salt, '$'); i >= 0 {
		salt = salt[:i]
	}
	if len(salt) > 8 {
		salt = salt[:8]
	}
	pw := []byte(password)
	alt := md5.New()
	alt.Write(pw)
	alt.Write([]byte(salt))
	alt.Write(pw)
	altSum := alt.Sum(nil)

	d := md5.New()
	d.Write(pw)
	d.Write([]byte(magic))
	d.Write([]byte(salt))
	for i := len(pw); i > 0; i -= 16 {
		d.Write(altSum[:min(16, i)])
	}
	for i := len(pw); i != 0; i >>= 1 {
		if i&1 != 0 {
			d.Write([]byte{0})
		} else {
			d.Write(pw[:1])
		}
	}
	final := d.Sum(nil)
	for i := range 1000 {
		r := md5.New()
		if i&1 != 0 {
			r.Write(pw)
		} else {
			r.Write(final)
		}
		if i%3 != 0 {
			r.Write([]byte(salt))
		}
		if i%7 != 0 {
			r.Write(pw)
		}
		if i&1 != 0 {
			r.Write(final)
		} else {
			r.Write(pw)
		}
		final = r.Sum(nil)
	}
	var b strings.Builder
	b.WriteString(magic)
	b.WriteString(salt)
	b.WriteByte('$')
	to64 := func(v uint32, n int) {
		for ; n > 0; n-- {
			b.WriteByte(cryptAlphabet[v&0x3f])
			v >>= 6
		}
	}
	f := func(i int) uint32 { return uint32(final[i]) }
	to64(f(0)<<16|f(6)<<8|f(12), 4)
	to64(f(1)<<16|f(7)<<8|f(13), 4)
	to64(f(2)<<16|f(8)<<8|f(14), 4)
	to64(f(3)<<16|f(9)<<8|f(15), 4)
	to64(f(4)<<16|f(10)<<8|f(5), 4)
	to64(f(11), 2)
	return b.String()
}
