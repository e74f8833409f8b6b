package consul

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// constraint is a compiled providers.consulCatalog.constraints expression:
// a boolean combination of Tag(`t`) (some tag equals t exactly) and
// TagRegex(`re`) (some tag matches the Go regexp re, unanchored), with
// &&, ||, ! and parentheses. Strings are quoted with backticks or double
// quotes. Source: https://doc.traefik.io/traefik/providers/consul-catalog/#constraints
//
// A constraint is immutable and safe for concurrent use.
type constraint func(tags []string) bool

// parseConstraint compiles expr. The empty expression keeps everything.
// Errors name the offset and what was expected; a bad regexp is an error here
// (Traefik silently treats it as "no match").
func parseConstraint(expr string) (constraint, error) {
	if strings.TrimSpace(expr) == "" {
		return func([]string) bool { return true }, nil
	}
	p := &cparser{src: expr}
	c, err := p.or()
	if err != nil {
		return nil, fmt.Errorf("constraints %q: %w", expr, err)
	}
	p.space()
	if p.pos < len(p.src) {
		return nil, fmt.Errorf("constraints %q: unexpected %q at offset %d", expr, p.src[p.pos:], p.pos)
	}
	return c, nil
}

type cparser struct {
	src string
	pos int
}

func (p *cparser) space() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
}

func (p *cparser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *cparser) or() (constraint, error) {
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
		l = func(t []string) bool { return a(t) || b(t) }
	}
	return l, nil
}

func (p *cparser) and() (constraint, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.eat("&&") {
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		a, b := l, r
		l = func(t []string) bool { return a(t) && b(t) }
	}
	return l, nil
}

func (p *cparser) unary() (constraint, error) {
	if p.eat("!") {
		c, err := p.unary()
		if err != nil {
			return nil, err
		}
		return func(t []string) bool { return !c(t) }, nil
	}
	if p.eat("(") {
		c, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("missing ) at offset %d", p.pos)
		}
		return c, nil
	}
	return p.call()
}

func (p *cparser) call() (constraint, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.src) && (unicode.IsLetter(rune(p.src[p.pos]))) {
		p.pos++
	}
	name := p.src[start:p.pos]
	if name == "" {
		return nil, fmt.Errorf("want Tag(…), TagRegex(…), ! or ( at offset %d", start)
	}
	if name != "Tag" && name != "TagRegex" {
		return nil, fmt.Errorf("unknown function %s at offset %d (want Tag or TagRegex)", name, start)
	}
	if !p.eat("(") {
		return nil, fmt.Errorf("want ( after %s at offset %d", name, p.pos)
	}
	arg, err := p.str()
	if err != nil {
		return nil, err
	}
	if !p.eat(")") {
		return nil, fmt.Errorf("%s takes exactly one argument: want ) at offset %d", name, p.pos)
	}
	if name == "TagRegex" {
		re, err := regexp.Compile(arg)
		if err != nil {
			return nil, fmt.Errorf("TagRegex: %w", err)
		}
		return func(t []string) bool { return slices.ContainsFunc(t, re.MatchString) }, nil
	}
	return func(t []string) bool { return slices.Contains(t, arg) }, nil
}

// str reads a backtick- or double-quoted string; double-quoted strings
// accept Go escapes.
func (p *cparser) str() (string, error) {
	p.space()
	if p.pos >= len(p.src) {
		return "", fmt.Errorf("want a quoted string at end of input")
	}
	q := p.src[p.pos]
	if q != '`' && q != '"' {
		return "", fmt.Errorf("want a string in backticks or double quotes at offset %d", p.pos)
	}
	for i := p.pos + 1; i < len(p.src); i++ {
		switch {
		case q == '"' && p.src[i] == '\\':
			i++
		case p.src[i] == q:
			raw := p.src[p.pos : i+1]
			p.pos = i + 1
			if q == '`' {
				return raw[1 : len(raw)-1], nil
			}
			return strconv.Unquote(raw)
		}
	}
	return "", fmt.Errorf("unterminated string at offset %d", p.pos)
}
