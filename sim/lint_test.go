package sim

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The determinism rules of doc.go, enforced on the source of the packages
// on the simulated path. Only the standard library is used: go/parser for
// syntax, go/types (with the source importer) to know which ranges are over
// maps.

// simulatedPath lists the directories (relative to the module root) whose
// non-test Go files must follow the rules, subdirectories included.
var simulatedPath = []string{"sim", "model", "invariants"}

// allowed exempts single files with the reason; keep it short.
var allowed = map[string]string{
	// The wall-clock adapter exists to run models in real time; it is never
	// used by a seeded run and only wraps benbjohnson/clock.
	"sim/wallclock.go": "wall-clock adapter",
}

var forbiddenImports = map[string]string{
	"math/rand":    "draw from the run's Source (sim.Rand)",
	"math/rand/v2": "draw from the run's Source (sim.Rand)",
	"crypto/rand":  "draw from the run's Source (sim.Rand)",
	"os":           "models do no I/O",
}

var forbiddenTime = map[string]bool{
	"Now": true, "Sleep": true, "After": true, "AfterFunc": true, "NewTimer": true,
	"Tick": true, "NewTicker": true, "Since": true, "Until": true,
}

func TestDeterminismLint(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	l := newLinter()
	for _, dir := range simulatedPath {
		pkgs := packageDirs(t, filepath.Join(root, dir))
		if len(pkgs) == 0 {
			t.Fatalf("no Go packages under %s: the lint would check nothing", dir)
		}
		for _, pkgDir := range pkgs {
			problems = append(problems, l.lintPackage(t, root, pkgDir)...)
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

func packageDirs(t *testing.T, dir string) []string {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			matches, _ := filepath.Glob(filepath.Join(path, "*.go"))
			for _, m := range matches {
				if !strings.HasSuffix(m, "_test.go") {
					out = append(out, path)
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// linter shares one file set and one source importer across packages, so
// each dependency is type-checked once.
type linter struct {
	fset *token.FileSet
	imp  types.Importer
}

func newLinter() *linter {
	fset := token.NewFileSet()
	return &linter{fset: fset, imp: importer.ForCompiler(fset, "source", nil)}
}

func (l *linter) lintPackage(t *testing.T, root, dir string) []string {
	fset := l.fset
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: l.imp}
	if _, err := conf.Check(dir, fset, files, info); err != nil {
		t.Fatalf("type-checking %s: %v", dir, err)
	}
	var problems []string
	report := func(pos token.Pos, format string, args ...any) {
		p := fset.Position(pos)
		rel, _ := filepath.Rel(root, p.Filename)
		if _, ok := allowed[filepath.ToSlash(rel)]; ok {
			return
		}
		problems = append(problems, fmt.Sprintf("%s:%d: %s", rel, p.Line, fmt.Sprintf(format, args...)))
	}
	for _, f := range files {
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if why, bad := forbiddenImports[path]; bad {
				report(imp.Pos(), "imports %s: %s", path, why)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				report(n.Pos(), "go statement: one goroutine runs the simulation")
			case *ast.SelectStmt:
				report(n.Pos(), "select statement: no channels on the simulated path")
			case *ast.ChanType:
				report(n.Pos(), "channel type: no channels on the simulated path")
			case *ast.SendStmt:
				report(n.Pos(), "channel send: no channels on the simulated path")
			case *ast.UnaryExpr:
				if n.Op == token.ARROW {
					report(n.Pos(), "channel receive: no channels on the simulated path")
				}
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && forbiddenTime[n.Sel.Name] {
					if pkg, ok := info.Uses[id].(*types.PkgName); ok && pkg.Imported().Path() == "time" {
						report(n.Pos(), "time.%s reads or waits on the wall clock: use the kernel's Clock", n.Sel.Name)
					}
				}
			case *ast.RangeStmt:
				if tv, ok := info.Types[n.X]; ok {
					if _, isMap := tv.Type.Underlying().(*types.Map); isMap {
						report(n.Pos(), "range over a map: iterate a slice or sorted keys")
					}
				}
			}
			return true
		})
	}
	return problems
}

// TestDeterminismLint_Catches proves the lint is not vacuous: a file with
// every forbidden construct yields every complaint.
func TestDeterminismLint_Catches(t *testing.T) {
	dir := t.TempDir()
	src := `package bad

import (
	"math/rand"
	"time"
)

func f(m map[string]int, c chan int) {
	go func() {}()
	select {}
	c <- 1
	<-c
	for range m {
	}
	_ = time.Now()
	time.Sleep(1)
	_ = rand.Int()
}
`
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	problems := newLinter().lintPackage(t, dir, dir)
	joined := strings.Join(problems, "\n")
	for _, want := range []string{"imports math/rand", "go statement", "select statement", "channel type",
		"channel send", "channel receive", "range over a map", "time.Now", "time.Sleep"} {
		if !strings.Contains(joined, want) {
			t.Errorf("lint missed %q; it reported:\n%s", want, joined)
		}
	}
}
