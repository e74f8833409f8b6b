package ingressnginx

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled at its first use, not at
// package init: the validators of this package use counted repetitions
// ({1,128}, {0,252}) that compile into large programs (about 830 KB of
// heap and 9 000 allocations in all, GODEBUG=inittrace=1), which a Gantry
// without an ingress-nginx provider would otherwise pay at every start.
type lazyRegexp struct {
	once sync.Once
	expr string
	re   *regexp.Regexp
}

// lazy returns the lazily compiled expr; expr must compile (a constant).
func lazy(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

// MatchString is regexp.Regexp.MatchString.
func (l *lazyRegexp) MatchString(s string) bool { return l.get().MatchString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (l *lazyRegexp) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}

// ReplaceAllStringFunc is regexp.Regexp.ReplaceAllStringFunc.
func (l *lazyRegexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return l.get().ReplaceAllStringFunc(src, repl)
}
