package rule

import (
	"strconv"
	"strings"
)

// Op is the kind of a Tree node.
type Op uint8

// The node kinds.
const (
	// Call is a function such as Host(`a`): Name and Args are set.
	Call Op = iota
	// And is Left && Right.
	And
	// Or is Left || Right.
	Or
	// Not is !Left.
	Not
)

// Tree is one node of a parsed expression. And and Or are binary and
// left-associative ("a || b || c" is (a || b) || c); parentheses are not
// kept, only the shape they imply.
type Tree struct {
	Op Op
	// Name is the function name exactly as written (Call only).
	Name string
	// Args are the unquoted string arguments (Call only); may be empty.
	Args []string
	// Left is the first operand of And and Or and the operand of Not.
	Left *Tree
	// Right is the second operand of And and Or.
	Right *Tree
	// Pos is the byte offset of the node in the parsed expression: the
	// name of a Call, the operator of And, Or and Not.
	Pos int
}

// String prints t in canonical form: arguments in backticks (double-quoted
// with Go escapes when they contain a backtick, a carriage return or a
// non-printable byte), single spaces around && and ||, and only the
// parentheses the shape needs. Parse(t.String()) returns a tree equal to t
// except for Pos.
func (t *Tree) String() string {
	var b strings.Builder
	t.print(&b, 0)
	return b.String()
}

func prec(op Op) int {
	switch op {
	case Or:
		return 1
	case And:
		return 2
	}
	return 3
}

// print writes t; parent is the precedence of the enclosing operator.
func (t *Tree) print(b *strings.Builder, parent int) {
	switch t.Op {
	case Call:
		b.WriteString(t.Name)
		b.WriteByte('(')
		for i, a := range t.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(Quote(a))
		}
		b.WriteByte(')')
	case Not:
		b.WriteByte('!')
		t.Left.print(b, prec(Not))
	case And, Or:
		p := prec(t.Op)
		if p < parent {
			b.WriteByte('(')
		}
		t.Left.print(b, p)
		if t.Op == And {
			b.WriteString(" && ")
		} else {
			b.WriteString(" || ")
		}
		// The right operand of a left-associative operator needs parentheses
		// when it has the same precedence, to keep the tree's shape.
		t.Right.print(b, p+1)
		if p < parent {
			b.WriteByte(')')
		}
	}
}

// Quote returns s as a rule string literal: in backticks when that
// represents s exactly, else double-quoted with Go escapes.
func Quote(s string) string {
	if strconv.CanBackquote(s) {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}

// Walk calls fn for every Call node of t, left to right, and returns the
// first error fn returns.
func (t *Tree) Walk(fn func(call *Tree) error) error {
	switch t.Op {
	case Call:
		return fn(t)
	case Not:
		return t.Left.Walk(fn)
	default:
		if err := t.Left.Walk(fn); err != nil {
			return err
		}
		return t.Right.Walk(fn)
	}
}

// Eval evaluates t, asking match for the value of each Call node; && and ||
// short-circuit left to right.
func (t *Tree) Eval(match func(call *Tree) bool) bool {
	switch t.Op {
	case Call:
		return match(t)
	case Not:
		return !t.Left.Eval(match)
	case And:
		return t.Left.Eval(match) && t.Right.Eval(match)
	default:
		return t.Left.Eval(match) || t.Right.Eval(match)
	}
}

// Equal reports whether a and b have the same shape, names and arguments,
// ignoring Pos.
func Equal(a, b *Tree) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Op != b.Op || a.Name != b.Name || len(a.Args) != len(b.Args) {
		return false
	}
	for i := range a.Args {
		if a.Args[i] != b.Args[i] {
			return false
		}
	}
	return Equal(a.Left, b.Left) && Equal(a.Right, b.Right)
}
