package middleware

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// defaultRealm is Traefik's realm for basicAuth and digestAuth.
const defaultRealm = "traefik"

// authEntry is one credential line and where it came from (for errors).
type authEntry struct {
	line  string
	field string // "users[2]" or "usersFile:7"
}

// loadAuthEntries returns the lines of users followed by those of
// usersFile (blank lines and "#" comments skipped), so that a later entry
// for the same user, from the file, wins: Traefik gives usersFile
// precedence when both are set. A usersFile that cannot be read is an
// error naming the file.
func loadAuthEntries(users []string, usersFile string) ([]authEntry, error) {
	var out []authEntry
	for i, u := range users {
		out = append(out, authEntry{strings.TrimSpace(u), fmt.Sprintf("users[%d]", i)})
	}
	if usersFile != "" {
		data, err := os.ReadFile(usersFile)
		if err != nil {
			return nil, errField("usersFile", "%w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			l := strings.TrimSpace(sc.Text())
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			out = append(out, authEntry{l, fmt.Sprintf("usersFile %s line %d", usersFile, n)})
		}
		if err := sc.Err(); err != nil {
			return nil, errField("usersFile", "%s: %w", usersFile, err)
		}
	}
	if len(out) == 0 {
		return nil, errField("users", "no users (set users or usersFile)")
	}
	return out, nil
}
