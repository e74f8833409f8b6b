package rule

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"single call", "Host(`a.example`)", "Host(`a.example`)"},
		{"double quotes", `Host("a.example")`, "Host(`a.example`)"},
		{"go escapes in double quotes", `HeaderRegexp("X", "192\\.0\\.2\\..*")`, "HeaderRegexp(`X`, `192\\.0\\.2\\..*`)"},
		{"backticks keep backslashes", "HeaderRegexp(`X`, `192\\.0`)", "HeaderRegexp(`X`, `192\\.0`)"},
		{"no args", "PathPrefix()", "PathPrefix()"},
		{"trailing comma", "Query(`a`, `b`,)", "Query(`a`, `b`)"},
		{"and binds tighter than or", "A(`1`) || B(`2`) && C(`3`)", "A(`1`) || B(`2`) && C(`3`)"},
		{"parens kept when needed", "(A(`1`) || B(`2`)) && C(`3`)", "(A(`1`) || B(`2`)) && C(`3`)"},
		{"redundant parens dropped", "((A(`1`)))", "A(`1`)"},
		{"right nesting kept", "A(`1`) || (B(`2`) || C(`3`))", "A(`1`) || (B(`2`) || C(`3`))"},
		{"left nesting flattened", "(A(`1`) || B(`2`)) || C(`3`)", "A(`1`) || B(`2`) || C(`3`)"},
		{"not", "!A(`1`) && !(B(`2`) || C(`3`))", "!A(`1`) && !(B(`2`) || C(`3`))"},
		{"double not", "!!A(`1`)", "!!A(`1`)"},
		{"whitespace and newlines", "\tA(`1`)\n&&\r\nB( `2` , `3` )", "A(`1`) && B(`2`, `3`)"},
		{"backtick in value printed with double quotes", "A(\"a`b\")", "A(\"a`b\")"},
		{"carriage return stripped from raw string", "A(`a\r\nb`)", `A("a\nb")`},
		{"escaped quote", `A("say \"hi\"")`, "A(`say \"hi\"`)"},
		{"unicode", "A(`é`)", "A(`é`)"},
		{"identifier with digits and underscore", "my_Fn2(`x`)", "my_Fn2(`x`)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := tr.String(); got != tt.want {
				t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
			again, err := Parse(tr.String())
			if err != nil || !Equal(tr, again) {
				t.Errorf("reparse of %q: tree differs (err %v)", tr.String(), err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in string
		off      int
		msg      string
	}{
		{"empty", "  ", 0, "empty expression"},
		{"single quotes (case 004 d)", "'PathPrefix()'", 0, "single quotes are not allowed"},
		{"bare word argument (case 004 e)", "Host(h.example.com)", 5, "Host: argument 1 must be quoted"},
		{"invalid go escape (case 004 c)", `HeaderRegexp("X", "192\.0")`, 18, "bad escape sequence"},
		{"unterminated backtick", "Host(`a", 5, "unterminated string"},
		{"unterminated double quote", `Host("a`, 5, "unterminated string"},
		{"newline in double quotes", "Host(\"a\nb\")", 7, "newline in double-quoted string"},
		{"missing close paren", "Host(`a`", 8, "Host: missing ')'"},
		{"missing argument separator", "Host(`a` `b`)", 9, "expected ',' or ')'"},
		{"unbalanced group", "(Host(`a`)", 10, "expected ')' to close the '(' at offset 0"},
		{"trailing input", "Host(`a`) Path(`/`)", 10, "unexpected name Path after a complete expression"},
		{"single ampersand", "Host(`a`) & Path(`/`)", 10, "use && or ||"},
		{"dangling operator", "Host(`a`) &&", 12, "unexpected end of expression"},
		{"name without call", "Host && Path(`/`)", 5, "expected '(' after Host"},
		{"string outside a call", "`a` && Host(`b`)", 0, "unexpected string `a`"},
		{"leading comma", "Host(,`a`)", 5, "argument 1 must be a quoted string"},
		{"unknown character", "Host(`a`) == Host(`b`)", 10, "unexpected character \"=\""},
		{"non-ascii name", "Hôst(`a`)", 1, "unexpected character \"ô\""},
		{"too deep", strings.Repeat("!", MaxDepth+2) + "A()", MaxDepth + 1, "nested deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error = %v, want *Error", tt.in, err)
			}
			if pe.Offset != tt.off || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("Parse(%q) = offset %d %q, want offset %d containing %q", tt.in, pe.Offset, pe.Msg, tt.off, tt.msg)
			}
		})
	}
}

func TestEvalAndWalk(t *testing.T) {
	tr, err := Parse("Label(`a`, `1`) && !(Label(`b`, `2`) || LabelRegex(`c`, `x.*`))")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := tr.Walk(func(c *Tree) error { names = append(names, c.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, ","); got != "Label,Label,LabelRegex" {
		t.Errorf("Walk visited %s, want Label,Label,LabelRegex", got)
	}
	stop := errors.New("stop")
	if err := tr.Walk(func(c *Tree) error { return stop }); err != stop {
		t.Errorf("Walk error = %v, want the callback's error", err)
	}
	labels := map[string]string{"a": "1", "c": "y"}
	match := func(c *Tree) bool {
		v, ok := labels[c.Args[0]]
		if c.Name == "LabelRegex" {
			return ok && strings.HasPrefix(v, "x")
		}
		return ok && v == c.Args[1]
	}
	if !tr.Eval(match) {
		t.Errorf("Eval = false, want true for %v", labels)
	}
	labels["b"] = "2"
	if tr.Eval(match) {
		t.Errorf("Eval = true, want false for %v", labels)
	}
}

func TestPositions(t *testing.T) {
	tr, err := Parse("A(`x`) || !B(`y`)")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Op != Or || tr.Pos != 7 || tr.Left.Pos != 0 || tr.Right.Op != Not || tr.Right.Pos != 10 || tr.Right.Left.Pos != 11 {
		t.Errorf("positions: or %d, left %d, not %d, call %d; want 7, 0, 10, 11", tr.Pos, tr.Left.Pos, tr.Right.Pos, tr.Right.Left.Pos)
	}
}
