package router

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gantry-proxy/gantry/config/rule"
)

// v2Names are the matchers of Traefik v2's rule syntax, still accepted per
// router with ruleSyntax v2 or globally with core.defaultRuleSyntax v2
// (https://doc.traefik.io/traefik/v2.11/routing/routers/#rule,
// pkg/muxer/http/matcher_v2.go). All but Headers and HeadersRegexp take
// one or more values; several values mean "any of them" (for Query: all of
// the key=value pairs).
var v2Names = []string{"Host", "HostHeader", "HostRegexp", "Path", "PathPrefix", "Method", "Headers", "HeadersRegexp", "Query", "ClientIP"}

func (c *compiled) v2(t *rule.Tree) (*node, error) {
	return c.tree(t, c.v2leaf)
}

func (c *compiled) v2leaf(t *rule.Tree) (*node, error) {
	name, ok := spelled(t.Name, v2Names)
	if !ok {
		return nil, rule.Errorf(t.Pos, "unknown matcher %s in v2 syntax; known: %s", t.Name, strings.Join(v2Names, ", "))
	}
	switch name {
	case "Headers", "HeadersRegexp":
		if err := (arity{2, 2}).check(t, name); err != nil {
			return nil, err
		}
		return leafNode(t, strings.Replace(name, "Headers", "Header", 1), t.Args)
	}
	if err := (arity{1, -1}).check(t, name); err != nil {
		return nil, err
	}
	join := kOr
	if name == "Query" {
		join = kAnd
	}
	var out *node
	for _, v := range t.Args {
		n, err := v2value(t, name, v)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = n
		} else {
			out = &node{kind: join, l: out, r: n}
		}
	}
	return out, nil
}

// v2value compiles one value of a v2 matcher.
func v2value(t *rule.Tree, name, v string) (*node, error) {
	switch name {
	case "Host", "HostHeader":
		return leafNode(t, "Host", []string{v})
	case "HostRegexp", "Path", "PathPrefix":
		defaultPat, exact := "[^/]+", "Path"
		if name == "HostRegexp" {
			defaultPat, exact = "[^.]+", "Host"
		}
		if name == "PathPrefix" {
			exact = "PathPrefix"
		}
		if !strings.Contains(v, "{") {
			n, err := leafNode(t, exact, []string{v})
			if err == nil && name == "HostRegexp" {
				n.text = "HostRegexp(" + rule.Quote(v) + ")"
			}
			return n, err
		}
		pat, err := template(v, defaultPat, name != "PathPrefix", name == "HostRegexp")
		if err != nil {
			return nil, rule.Errorf(t.Pos, "%s: %v", name, err)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, rule.Errorf(t.Pos, "%s: template %q: %v", name, v, err)
		}
		k := kPathRe
		if name == "HostRegexp" {
			k = kHostRe
		}
		return &node{kind: k, re: re, text: name + "(" + rule.Quote(v) + ")"}, nil
	case "Query":
		key, val, hasVal := strings.Cut(v, "=")
		text := "Query(" + rule.Quote(v) + ")"
		switch {
		case !hasVal:
			return &node{kind: kQuery, s: key, any: true, text: text}, nil
		case strings.Contains(val, "{"):
			pat, err := template(val, ".*", true, false)
			if err != nil {
				return nil, rule.Errorf(t.Pos, "Query: %v", err)
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, rule.Errorf(t.Pos, "Query: template %q: %v", v, err)
			}
			return &node{kind: kQueryRe, s: key, re: re, text: text}, nil
		}
		return &node{kind: kQuery, s: key, s2: val, text: text}, nil
	}
	// Method, ClientIP
	return leafNode(t, name, []string{v})
}

// template turns a gorilla/mux style template ("/users/{id:[0-9]+}",
// "{sub}.example.com") into an anchored regexp: literal text is quoted,
// {name} becomes defaultPat and {name:re} becomes re. Braces may nest
// inside re. full adds the end anchor; lower lower-cases the literal text
// (hosts are matched lower-cased).
func template(tpl, defaultPat string, full, lower bool) (string, error) {
	lit := regexp.QuoteMeta
	if lower {
		lit = func(s string) string { return regexp.QuoteMeta(strings.ToLower(s)) }
	}
	var b strings.Builder
	b.WriteString("^")
	for tpl != "" {
		open := strings.IndexByte(tpl, '{')
		if open < 0 {
			if strings.IndexByte(tpl, '}') >= 0 {
				return "", fmt.Errorf("unbalanced braces in template")
			}
			b.WriteString(lit(tpl))
			break
		}
		if strings.IndexByte(tpl[:open], '}') >= 0 {
			return "", fmt.Errorf("unbalanced braces in template")
		}
		b.WriteString(lit(tpl[:open]))
		depth, end := 0, -1
		for i := open; i < len(tpl); i++ {
			if tpl[i] == '{' {
				depth++
			} else if tpl[i] == '}' {
				depth--
				if depth == 0 {
					end = i
					break
				}
			}
		}
		if end < 0 {
			return "", fmt.Errorf("unbalanced braces in template")
		}
		name, pat, hasPat := strings.Cut(tpl[open+1:end], ":")
		if name == "" && !hasPat {
			return "", fmt.Errorf("empty placeholder {} in template")
		}
		if !hasPat || pat == "" {
			pat = defaultPat
		}
		b.WriteString("(?:" + pat + ")")
		tpl = tpl[end+1:]
	}
	if full {
		b.WriteString("$")
	}
	return b.String(), nil
}
