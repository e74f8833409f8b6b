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
	"env":        os.Getenv,
	"default":    dflt,
	"split":      splitList,
	"splitList":  splitList,
	"trim":       strings.TrimSpace,
	"trimPrefix": func(p, s string) string { return strings.TrimPrefix(s, p) },
	"trimSuffix": func(p, s string) string { return strings.TrimSuffix(s, p) },
	"upper":      strings.ToUpper,
	"lower":      strings.ToLower,
	"contains":   func(sub, s string) bool { return strings.Contains(s, sub) },
	"hasPrefix":  func(p, s string) bool { return strings.HasPrefix(s, p) },
	"hasSuffix":  func(p, s string) bool { return strings.HasSuffix(s, p) },
	"list":       func(v ...any) []any { return v },
	"until":      func(n int) []int { return seq(0, n-1) },
	"seq":        seq,
	"add":        func(a, b int) int { return a + b },
	"sub":        func(a, b int) int { return a - b },
	"atoi":       strconv.Atoi,
	// replace, join, quote, printf, print and println are bounded per
	// render: see guard.funcs.
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

// guard bounds one render: every range iteration and template call costs a
// step, and checks ctx (the deadline, or shutdown); every function result
// and the output are bounded by max bytes.
type guard struct {
	ctx   context.Context
	max   int
	steps int
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
			if err := g.size("replace", n); err != nil {
				return "", err
			}
			return strings.ReplaceAll(s, old, new), nil
		},
		"join": func(sep string, v any) (string, error) {
			s, err := join(sep, v)
			if err == nil {
				err = g.size("join", len(s))
			}
			return s, err
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
			return s, g.size("printf", len(s))
		},
		"print": func(args ...any) (string, error) {
			s := fmt.Sprint(args...)
			return s, g.size("print", len(s))
		},
		"println": func(args ...any) (string, error) {
			s := fmt.Sprintln(args...)
			return s, g.size("println", len(s))
		},
		"quote": func(s string) (string, error) {
			q := strconv.Quote(s) // at most a few times len(s), which is bounded
			return q, g.size("quote", len(q))
		},
	}
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
		return nil, err
	}
	return out.Bytes(), nil
}

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
