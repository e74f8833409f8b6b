package docker

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// matcher reports whether a container's labels satisfy a constraint.
type matcher func(labels map[string]string) bool

// parseConstraints compiles a constraints expression (Traefik's
// providers.docker.constraints): Label(`key`, `value`) holds when the label
// key has exactly value; LabelRegex(`key`, `re`) when the label key exists and
// its value matches the Go regular expression re (unanchored); combined with
// !, && and || (in that precedence) and parentheses. Strings are backquoted
// or double-quoted. An empty expression matches every container.
// Source: https://doc.traefik.io/traefik/providers/docker/#constraints
//
// Errors name the offset and what was expected.
func parseConstraints(expr string) (matcher, error) {
	if strings.TrimSpace(expr) == "" {
		return func(map[string]string) bool { return true }, nil
	}
	p := &cparser{s: expr}
	m, err := p.or()
	if err != nil {
		return nil, fmt.Errorf("constraints %q: %w", expr, err)
	}
	p.space()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("constraints %q: unexpected %q at offset %d", expr, p.s[p.i:], p.i)
	}
	return m, nil
}

type cparser struct {
	s string
	i int
}

func (p *cparser) space() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

func (p *cparser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *cparser) or() (matcher, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.eat("||") {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		a, b := l, r
		l = func(m map[string]string) bool { return a(m) || b(m) }
	}
	return l, nil
}

func (p *cparser) and() (matcher, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.eat("&&") {
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		a, b := l, r
		l = func(m map[string]string) bool { return a(m) && b(m) }
	}
	return l, nil
}

func (p *cparser) not() (matcher, error) {
	if p.eat("!") {
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return func(m map[string]string) bool { return !x(m) }, nil
	}
	return p.primary()
}

func (p *cparser) primary() (matcher, error) {
	if p.eat("(") {
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("missing ')' at offset %d", p.i)
		}
		return x, nil
	}
	p.space()
	start := p.i
	for p.i < len(p.s) && (unicode.IsLetter(rune(p.s[p.i])) || unicode.IsDigit(rune(p.s[p.i]))) {
		p.i++
	}
	name := p.s[start:p.i]
	if name == "" {
		return nil, fmt.Errorf("want Label(...), LabelRegex(...), '!' or '(' at offset %d", start)
	}
	if !p.eat("(") {
		return nil, fmt.Errorf("want '(' after %s at offset %d", name, p.i)
	}
	var args []string
	for {
		a, err := p.str()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if p.eat(")") {
			break
		}
		if !p.eat(",") {
			return nil, fmt.Errorf("want ',' or ')' at offset %d", p.i)
		}
	}
	if len(args) != 2 {
		return nil, fmt.Errorf("%s takes 2 arguments, got %d", name, len(args))
	}
	key, val := args[0], args[1]
	switch name {
	case "Label":
		return func(m map[string]string) bool { v, ok := m[key]; return ok && v == val }, nil
	case "LabelRegex":
		re, err := regexp.Compile(val)
		if err != nil {
			return nil, fmt.Errorf("LabelRegex(%q): %w", key, err)
		}
		return func(m map[string]string) bool { v, ok := m[key]; return ok && re.MatchString(v) }, nil
	}
	return nil, fmt.Errorf("unknown function %q: want Label or LabelRegex", name)
}

func (p *cparser) str() (string, error) {
	p.space()
	if p.i >= len(p.s) {
		return "", fmt.Errorf("want a string at end of expression")
	}
	switch q := p.s[p.i]; q {
	case '`':
		end := strings.IndexByte(p.s[p.i+1:], '`')
		if end < 0 {
			return "", fmt.Errorf("unterminated string at offset %d", p.i)
		}
		v := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		return v, nil
	case '"':
		for j := p.i + 1; j < len(p.s); j++ {
			if p.s[j] == '\\' {
				j++
				continue
			}
			if p.s[j] == '"' {
				v, err := strconv.Unquote(p.s[p.i : j+1])
				if err != nil {
					return "", fmt.Errorf("bad string at offset %d: %w", p.i, err)
				}
				p.i = j + 1
				return v, nil
			}
		}
		return "", fmt.Errorf("unterminated string at offset %d", p.i)
	}
	return "", fmt.Errorf("want a string in backquotes or double quotes at offset %d", p.i)
}
