package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"unicode/utf8"
)

// funcs are the template functions available in configuration files: a
// small, dependency-free subset of sprig's (which Traefik offers), with
// sprig's argument order so that Traefik templates render unchanged.
//
//	env "NAME"                  value of an environment variable ("" if unset)
//	default "x" v               v, or "x" when v is empty ("", 0, nil, false, empty list)
//	split ","  "a,b"            ["a" "b"] (sprig's splitList; range over it)
//	splitList ","  "a,b"        the same
//	join "," list               "a,b"
//	trim " a "                  "a"
//	trimPrefix / trimSuffix     strings.TrimPrefix / TrimSuffix, prefix first
//	upper, lower                case changes
//	replace "old" "new" s       strings.ReplaceAll
//	contains / hasPrefix / hasSuffix   substring tests, needle first
//	list a b c                  a list of its arguments
//	until n                     [0 1 … n-1]
//	seq a b                     [a … b] inclusive
//	add a b, sub a b            integer arithmetic
//	atoi s                      integer value of s (error if not a number)
//	quote s                     s as a double-quoted string
var funcs = template.FuncMap{
	"default":    dflt,
	"trim":       strings.TrimSpace,
	"trimPrefix": func(p, s string) string { return strings.TrimPrefix(s, p) },
	"trimSuffix": func(p, s string) string { return strings.TrimSuffix(s, p) },
	"contains":   func(sub, s string) bool { return strings.Contains(s, sub) },
	"hasPrefix":  func(p, s string) bool { return strings.HasPrefix(s, p) },
	"hasSuffix":  func(p, s string) bool { return strings.HasSuffix(s, p) },
	"add":        func(a, b int) int { return a + b },
	"sub":        func(a, b int) int { return a - b },
	"atoi":       strconv.Atoi,
	// env, split, splitList, upper, lower, list, until, seq, replace,
	// join, quote, printf, print, println, html, js and urlquery count
	// the bytes they build against the render's budget: see guard.funcs.
}

func dflt(d, v any) any {
	switch x := v.(type) {
	case nil:
		return d
	case string:
		if x == "" {
			return d
		}
	case bool:
		if !x {
			return d
		}
	case int:
		if x == 0 {
			return d
		}
	case []string:
		if len(x) == 0 {
			return d
		}
	case []any:
		if len(x) == 0 {
			return d
		}
	}
	return v
}

func splitList(sep, s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, sep)
}

func join(sep string, v any) (string, error) {
	switch l := v.(type) {
	case []string:
		return strings.Join(l, sep), nil
	case []any:
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, sep), nil
	case []int:
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = strconv.Itoa(e)
		}
		return strings.Join(parts, sep), nil
	}
	return "", fmt.Errorf("join: cannot join %T", v)
}

// maxSeq bounds seq and until so a typo cannot allocate without limit.
const maxSeq = 100_000

func seq(a, b int) []int {
	if b < a {
		return nil
	}
	n := min(b-a+1, maxSeq)
	out := make([]int, n)
	for i := range out {
		out[i] = a + i
	}
	return out
}

// Render limits (Gantry's own; Traefik renders without bounds). A
// template that needs more is reported as a problem naming its file.
const (
	// maxTemplateSteps bounds the range iterations plus template calls of
	// one render: two nested ranges of 300 are fine, of 1 000 are not (a
	// file of 100 000 routers is far over any real configuration).
	maxTemplateSteps = 100_000
	// maxFormatWidth bounds a printf width or precision ("%0999999999d").
	maxFormatWidth = 1000
)

// errRenderLimit marks a render stopped by a limit.
var errRenderLimit = errors.New("template limit")

// renderBudgetFactor sets the bytes one render may build in all: every
// value a function builds (strings, lists) and the output count, up to
// renderBudgetFactor × max (providers.file.maxFileSize, 64 MiB by
// default). Bounding each value alone let 60 lines of 16 MB values reach
// 958 MB (issue 23).
const renderBudgetFactor = 4

// guard bounds one render: every range iteration and template call costs a
// step, and checks ctx (the deadline, or shutdown); every function result
// and the output are bounded by max bytes each, and all of them together
// by renderBudgetFactor × max.
type guard struct {
	ctx   context.Context
	max   int
	steps int
	spent int // bytes built so far by functions and written as output
}

func (g *guard) tick() (string, error) {
	if g.steps++; g.steps > maxTemplateSteps {
		return "", fmt.Errorf("%w: more than %d range iterations and template calls", errRenderLimit, maxTemplateSteps)
	}
	if err := g.ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", fmt.Errorf("%w: rendering took longer than providers.file.templateTimeout", errRenderLimit)
		}
		return "", fmt.Errorf("rendering stopped: %w", err)
	}
	return "", nil
}

// size fails when a value of n bytes would exceed the output limit.
func (g *guard) size(what string, n int) error {
	if n > g.max {
		return fmt.Errorf("%w: %s would be %d bytes, over providers.file.maxFileSize (%d)", errRenderLimit, what, n, g.max)
	}
	return nil
}

// charge is size for a value about to be built (n bytes), which also
// counts against the render's budget.
func (g *guard) charge(what string, n int) error {
	if err := g.size(what, n); err != nil {
		return err
	}
	if g.spent += n; g.spent > renderBudgetFactor*g.max {
		return fmt.Errorf("%w: the render built more than %d bytes in all (values and output; %d × providers.file.maxFileSize)",
			errRenderLimit, renderBudgetFactor*g.max, renderBudgetFactor)
	}
	return nil
}

// Bytes charged for the elements of a list a function builds.
const (
	stringElem = 16 // a string header
	anyElem    = 16 // an interface value
	intElem    = 8
)

// funcs returns the functions that could build a value larger than the
// output limit, each checking the size before building it (printf and print
// replace text/template's builtins).
func (g *guard) funcs() template.FuncMap {
	return template.FuncMap{
		tickFunc: g.tick,
		"replace": func(old, new, s string) (string, error) {
			n := len(s)
			if len(new) > len(old) {
				c := strings.Count(s, old)
				if old == "" {
					c = utf8.RuneCountInString(s) + 1
				}
				n += c * (len(new) - len(old))
			}
			if err := g.charge("replace", n); err != nil {
				return "", err
			}
			return strings.ReplaceAll(s, old, new), nil
		},
		"join": func(sep string, v any) (string, error) {
			if err := g.charge("join", joinedLen(sep, v)); err != nil {
				return "", err
			}
			return join(sep, v)
		},
		"upper": g.mapString("upper", strings.ToUpper),
		"lower": g.mapString("lower", strings.ToLower),
		"env": func(name string) (string, error) {
			v := os.Getenv(name)
			return v, g.charge("env", len(v))
		},
		"split":     g.split,
		"splitList": g.split,
		"list": func(v ...any) ([]any, error) {
			return v, g.charge("list", anyElem*len(v))
		},
		"until": func(n int) ([]int, error) {
			if err := g.charge("until", intElem*min(max(n, 0), maxSeq)); err != nil {
				return nil, err
			}
			return seq(0, n-1), nil
		},
		"seq": func(a, b int) ([]int, error) {
			if err := g.charge("seq", intElem*min(max(b-a+1, 0), maxSeq)); err != nil {
				return nil, err
			}
			return seq(a, b), nil
		},
		"html": func(args ...any) (string, error) {
			s := fmt.Sprint(args...)
			if err := g.charge("html", 6*len(s)); err != nil { // &#34; is the longest escape
				return "", err
			}
			return template.HTMLEscapeString(s), nil
		},
		"js": func(args ...any) (string, error) {
			s := fmt.Sprint(args...)
			if err := g.charge("js", 6*len(s)); err != nil { // \u003C is the longest escape
				return "", err
			}
			return template.JSEscapeString(s), nil
		},
		"urlquery": func(args ...any) (string, error) {
			s := fmt.Sprint(args...)
			if err := g.charge("urlquery", 3*len(s)); err != nil { // %XX
				return "", err
			}
			return template.URLQueryEscaper(s), nil
		},
		"printf": func(format string, args ...any) (string, error) {
			if err := checkFormat(format); err != nil {
				return "", err
			}
			n := len(format)
			for _, a := range args {
				if s, ok := a.(string); ok {
					n += len(s)
				} else {
					n += 64
				}
			}
			if err := g.size("printf", n); err != nil {
				return "", err
			}
			s := fmt.Sprintf(format, args...)
			return s, g.charge("printf", len(s))
		},
		"print": func(args ...any) (string, error) {
			s := fmt.Sprint(args...)
			return s, g.charge("print", len(s))
		},
		"println": func(args ...any) (string, error) {
			s := fmt.Sprintln(args...)
			return s, g.charge("println", len(s))
		},
		"quote": func(s string) (string, error) {
			q := strconv.Quote(s) // at most a few times len(s), which is bounded
			return q, g.charge("quote", len(q))
		},
	}
}

// mapString returns f as a template function charging len(s) bytes for
// its result (f keeps the length: a case change).
func (g *guard) mapString(what string, f func(string) string) func(string) (string, error) {
	return func(s string) (string, error) {
		if err := g.charge(what, len(s)); err != nil {
			return "", err
		}
		return f(s), nil
	}
}

// split is sprig's splitList, charging a string header per element (the
// elements share sep-separated s's memory).
func (g *guard) split(sep, s string) ([]string, error) {
	n := strings.Count(s, sep) + 1
	if sep == "" {
		n = utf8.RuneCountInString(s)
	}
	if err := g.charge("split", stringElem*n); err != nil {
		return nil, err
	}
	return splitList(sep, s), nil
}

// joinedLen is the length of join(sep, v), computed without building it.
func joinedLen(sep string, v any) int {
	n := 0
	add := func(k, l int) {
		n += l
		if k > 0 {
			n += len(sep)
		}
	}
	switch l := v.(type) {
	case []string:
		for i, e := range l {
			add(i, len(e))
		}
	case []any:
		for i, e := range l {
			if s, ok := e.(string); ok {
				add(i, len(s))
			} else {
				add(i, len(fmt.Sprint(e)))
			}
		}
	case []int:
		for i, e := range l {
			add(i, len(strconv.Itoa(e)))
		}
	}
	return n
}

// checkFormat rejects printf widths and precisions over maxFormatWidth, and
// "*" (a width taken from an argument).
func checkFormat(format string) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			if c == '*' {
				return fmt.Errorf("%w: printf width \"*\" is not allowed", errRenderLimit)
			}
			if c >= '0' && c <= '9' {
				j := i
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				if n, err := strconv.Atoi(format[i:j]); err != nil || n > maxFormatWidth {
					return fmt.Errorf("%w: printf width or precision %s is over %d", errRenderLimit, format[i:j], maxFormatWidth)
				}
				i = j - 1
				continue
			}
			if !strings.ContainsRune("+-# .[]", rune(c)) {
				break // the verb
			}
		}
	}
	return nil
}

// tickFunc is the step function render inserts at the start of every range
// body and template: not a name a user template can shadow by accident.
const tickFunc = "gantry_tick"

// limitedBuffer is the render output: a write past max fails, which stops
// the template.
type limitedBuffer struct {
	bytes.Buffer
	g *guard
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if err := b.g.size("the rendered file", b.Len()+len(p)); err != nil {
		return 0, err
	}
	if err := b.g.charge("the rendered file", len(p)); err != nil {
		return 0, err
	}
	return b.Buffer.Write(p)
}

// render executes data as a template named name, within maxBytes of output
// and of any value built, maxTemplateSteps steps and ctx (give it a
// deadline): a template bomb stops with an error instead of growing memory
// or holding the provider (issue 15). Errors carry the template's
// "name:line[:col]" location.
func render(ctx context.Context, name string, data []byte, maxBytes int) ([]byte, error) {
	g := &guard{ctx: ctx, max: maxBytes}
	t, err := template.New(name).Funcs(funcs).Funcs(g.funcs()).Option("missingkey=error").Parse(string(data))
	if err != nil {
		return nil, err
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			instrument(tt.Tree, tt.Tree.Root)
			tt.Tree.Root.Nodes = append([]parse.Node{tickNode(tt.Tree, tt.Tree.Root.Position())}, tt.Tree.Root.Nodes...)
		}
	}
	out := &limitedBuffer{g: g}
	if err := t.Execute(out, nil); err != nil {
		if errors.Is(err, errRenderLimit) {
			// A limit hit by a tick reads "at <gantry_tick>: error calling
			// gantry_tick": the position is the user's range, the function
			// is ours.
			msg := strings.Replace(err.Error(), " at <"+tickFunc+">: error calling "+tickFunc, "", 1)
			return nil, &renderError{msg: msg, err: err}
		}
		return nil, err
	}
	return out.Bytes(), nil
}

// renderError is an execution error with its text rewritten; errors.Is and
// errors.As still reach the original.
type renderError struct {
	msg string
	err error
}

func (e *renderError) Error() string { return e.msg }
func (e *renderError) Unwrap() error { return e.err }

// instrument inserts a tick at the start of every range body under n.
func instrument(tree *parse.Tree, n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			instrument(tree, c)
		}
	case *parse.RangeNode:
		instrument(tree, n.List)
		instrument(tree, n.ElseList)
		n.List.Nodes = append([]parse.Node{tickNode(tree, n.Position())}, n.List.Nodes...)
	case *parse.IfNode:
		instrument(tree, n.List)
		instrument(tree, n.ElseList)
	case *parse.WithNode:
		instrument(tree, n.List)
		instrument(tree, n.ElseList)
	}
}

// tickNode is {{gantry_tick}} (which prints nothing) at pos.
func tickNode(tree *parse.Tree, pos parse.Pos) parse.Node {
	id := parse.NewIdentifier(tickFunc).SetTree(tree).SetPos(pos)
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{id}}
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{cmd}}}
}
