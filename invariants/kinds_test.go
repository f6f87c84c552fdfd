package invariants

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/orchsim/orchsim/sim"
)

// undeclaredKinds are the invariants whose checkers are fed every event on
// purpose (no sim.KindObserver), each with its reason.
var undeclaredKinds = map[string]string{
	PTYAttachBalanced:   "a mismatch becomes overdue on any event",
	WedgedSpawnReplaced: "a spawn becomes overdue on any event",
	OneAgentPerSession:  "it notes every main event's caller",
}

// Every checker either declares the kinds it observes or is listed as fed
// every event on purpose, so a new checker makes the choice.
func TestEveryCheckerDecidesItsKinds(t *testing.T) {
	for _, i := range All() {
		if strings.HasPrefix(i.Name, "extra-test-invariant") {
			continue // the test build's extra invariant (extra_testbuild.go)
		}
		c := i.New()
		k, declaresKinds := c.(sim.KindObserver)
		a, declaresActors := c.(sim.ActorObserver)
		declares := declaresKinds || declaresActors
		_, exempt := undeclaredKinds[i.Name]
		switch {
		case declares && exempt:
			t.Errorf("%s declares kinds but is listed as fed every event", i.Name)
		case declaresKinds && len(k.ObservedKinds()) == 0 && !declaresActors:
			t.Errorf("%s declares no kinds: drop ObservedKinds or list it in undeclaredKinds", i.Name)
		case declaresActors && len(a.ObservedActors()) == 0:
			t.Errorf("%s declares no actors: drop ObservedActors", i.Name)
		case !declares && !exempt:
			t.Errorf("%s declares no kinds (sim.KindObserver) and is not listed in undeclaredKinds", i.Name)
		}
	}
}

// Every kind a declaring checker's Observe compares ev.Kind with (ev.Kind
// == "x", or a case of switch ev.Kind) is among its declared kinds: a
// static check of what TestDeclaredKindsSuffice (scenarios) checks on
// traces. Helpers called from Observe are not followed.
func TestDeclaredKindsCoverObserve(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	kindsOf := map[string][]string{} // checker type -> declared kinds
	for _, i := range All() {
		if k, ok := i.New().(sim.KindObserver); ok {
			typ := reflect.TypeOf(k)
			if typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			kindsOf[typ.Name()] = k.ObservedKinds()
		}
	}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "Observe" || fn.Recv == nil || fn.Body == nil {
				continue
			}
			recv := fn.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				recv = s.X
			}
			id, ok := recv.(*ast.Ident)
			if !ok {
				continue
			}
			kinds, ok := kindsOf[id.Name]
			if !ok {
				continue
			}
			checked++
			for _, lit := range kindLiterals(fn.Body) {
				if !slices.Contains(kinds, lit) {
					t.Errorf("%s.Observe compares ev.Kind with %q, which it does not declare", id.Name, lit)
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked %d declaring checkers' Observe, want every one", checked)
	}
}

// kindLiterals returns the string literals body compares ev.Kind with.
func kindLiterals(body *ast.BlockStmt) []string {
	isKind := func(e ast.Expr) bool {
		s, ok := e.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "Kind"
	}
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	var out []string
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op == token.EQL && isKind(n.X) {
				if s, ok := lit(n.Y); ok {
					out = append(out, s)
				}
			}
		case *ast.SwitchStmt:
			if n.Tag != nil && isKind(n.Tag) {
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						if s, ok := lit(e); ok {
							out = append(out, s)
						}
					}
				}
			}
		}
		return true
	})
	return out
}
