package rule

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxDepth bounds the nesting of parentheses and "!" in one expression;
// deeper input is a parse error rather than a deep recursion.
const MaxDepth = 200

// Error is a parse error: Offset is the byte offset in the expression where
// the problem was found, Msg says what is wrong.
type Error struct {
	Offset int
	Msg    string
}

// Error renders "offset 7: expected ')' after the arguments of Host".
func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// Errorf returns an *Error at offset off, for callers that check a parsed
// Tree (unknown names, argument counts) and want the same error shape.
func Errorf(off int, format string, a ...any) *Error {
	return &Error{Offset: off, Msg: fmt.Sprintf(format, a...)}
}

// Parse parses expr into a Tree. It returns an *Error for an empty
// expression, an unknown token, a bad string literal, unbalanced
// parentheses or trailing input.
func Parse(expr string) (*Tree, error) {
	p := &parser{lx: lexer{src: expr}}
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tEOF {
		return nil, Errorf(0, "empty expression")
	}
	t, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, Errorf(p.tok.pos, "unexpected %s after a complete expression; join expressions with && or ||", p.tok.describe())
	}
	return t, nil
}

type parser struct {
	lx  lexer
	tok token
}

func (p *parser) next() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) or(depth int) (*Tree, error) { return p.binary(depth, tOr, Or, p.and) }

func (p *parser) and(depth int) (*Tree, error) { return p.binary(depth, tAnd, And, p.unary) }

// binary parses operands (each by operand) joined by the operator token
// tok into a left-associative chain of op nodes ("a || b || c" is
// (a || b) || c), each at its operator's position.
func (p *parser) binary(depth int, tok tokKind, op Op, operand func(int) (*Tree, error)) (*Tree, error) {
	left, err := operand(depth)
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tok {
		pos := p.tok.pos
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := operand(depth)
		if err != nil {
			return nil, err
		}
		left = &Tree{Op: op, Left: left, Right: right, Pos: pos}
	}
	return left, nil
}

func (p *parser) unary(depth int) (*Tree, error) {
	if depth > MaxDepth {
		return nil, Errorf(p.tok.pos, "expression nested deeper than %d levels", MaxDepth)
	}
	switch p.tok.kind {
	case tNot:
		pos := p.tok.pos
		if err := p.next(); err != nil {
			return nil, err
		}
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Tree{Op: Not, Left: x, Pos: pos}, nil
	case tLParen:
		open := p.tok.pos
		if err := p.next(); err != nil {
			return nil, err
		}
		x, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, Errorf(p.tok.pos, "expected ')' to close the '(' at offset %d, got %s", open, p.tok.describe())
		}
		return x, p.next()
	case tIdent:
		return p.call()
	case tString:
		return nil, Errorf(p.tok.pos, "unexpected string %s; a value must be an argument of a matcher such as Host(%s)", p.tok.text, p.tok.text)
	case tEOF:
		return nil, Errorf(p.tok.pos, "unexpected end of expression; expected a matcher, '!' or '('")
	default:
		return nil, Errorf(p.tok.pos, "unexpected %s; expected a matcher, '!' or '('", p.tok.describe())
	}
}

func (p *parser) call() (*Tree, error) {
	t := &Tree{Op: Call, Name: p.tok.text, Pos: p.tok.pos}
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind != tLParen {
		return nil, Errorf(p.tok.pos, "expected '(' after %s, got %s", t.Name, p.tok.describe())
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	for p.tok.kind != tRParen {
		switch p.tok.kind {
		case tString:
			t.Args = append(t.Args, p.tok.val)
		case tIdent:
			return nil, Errorf(p.tok.pos, "%s: argument %d must be quoted with backticks or double quotes, got bare word %s", t.Name, len(t.Args)+1, p.tok.text)
		case tEOF:
			return nil, Errorf(p.tok.pos, "%s: missing ')' after the arguments", t.Name)
		default:
			return nil, Errorf(p.tok.pos, "%s: argument %d must be a quoted string, got %s", t.Name, len(t.Args)+1, p.tok.describe())
		}
		if err := p.next(); err != nil {
			return nil, err
		}
		switch p.tok.kind {
		case tComma:
			if err := p.next(); err != nil {
				return nil, err
			}
		case tRParen:
		case tEOF:
			return nil, Errorf(p.tok.pos, "%s: missing ')' after the arguments", t.Name)
		default:
			return nil, Errorf(p.tok.pos, "%s: expected ',' or ')' after argument %d, got %s", t.Name, len(t.Args), p.tok.describe())
		}
	}
	return t, p.next()
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tString
	tLParen
	tRParen
	tComma
	tAnd
	tOr
	tNot
)

type token struct {
	kind tokKind
	pos  int
	text string // as written
	val  string // tString: the unquoted value
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tIdent:
		return "name " + t.text
	case tString:
		return "string " + t.text
	}
	return strconv.Quote(t.text)
}

type lexer struct {
	src string
	pos int
}

func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) && strings.IndexByte(" \t\r\n", l.src[l.pos]) >= 0 {
		l.pos++
	}
	start := l.pos
	if start >= len(l.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := l.src[start]
	two := ""
	if start+1 < len(l.src) {
		two = l.src[start : start+2]
	}
	single := func(k tokKind) (token, error) {
		l.pos++
		return token{kind: k, pos: start, text: l.src[start:l.pos]}, nil
	}
	switch {
	case c == '(':
		return single(tLParen)
	case c == ')':
		return single(tRParen)
	case c == ',':
		return single(tComma)
	case c == '!':
		return single(tNot)
	case two == "&&":
		l.pos += 2
		return token{kind: tAnd, pos: start, text: two}, nil
	case two == "||":
		l.pos += 2
		return token{kind: tOr, pos: start, text: two}, nil
	case c == '`' || c == '"':
		return l.str(c)
	case c == '\'':
		return token{}, Errorf(start, "single quotes are not allowed; quote values with backticks or double quotes")
	case isIdentStart(c):
		for l.pos < len(l.src) && (isIdentStart(l.src[l.pos]) || isDigit(l.src[l.pos])) {
			l.pos++
		}
		return token{kind: tIdent, pos: start, text: l.src[start:l.pos]}, nil
	case c == '&' || c == '|':
		return token{}, Errorf(start, "unexpected %q; use && or ||", c)
	}
	return token{}, Errorf(start, "unexpected character %q", l.src[start:start+utf8Len(l.src[start:])])
}

// str scans a backtick (raw) or double-quoted (Go escapes) string.
func (l *lexer) str(q byte) (token, error) {
	start := l.pos
	i := start + 1
	for ; i < len(l.src); i++ {
		c := l.src[i]
		if c == q {
			break
		}
		if q == '"' {
			if c == '\n' {
				return token{}, Errorf(i, "newline in double-quoted string")
			}
			if c == '\\' {
				i++
			}
		}
	}
	if i >= len(l.src) {
		return token{}, Errorf(start, "unterminated string starting with %c", q)
	}
	l.pos = i + 1
	text := l.src[start:l.pos]
	val, err := strconv.Unquote(text)
	if err != nil {
		return token{}, Errorf(start, "invalid string %s: bad escape sequence (in double quotes, write \\\\ for a backslash, or use backticks)", text)
	}
	return token{kind: tString, pos: start, text: text, val: val}, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func utf8Len(s string) int {
	for i := range s {
		if i > 0 {
			return i
		}
	}
	return len(s)
}
