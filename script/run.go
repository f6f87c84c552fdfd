package script

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/orchsim/orchsim/replay"
)

// interpreter runs the commands of one file in one language; a fresh one
// serves every file.
type interpreter interface {
	// exec runs c and returns its output. A problem with the command itself
	// (not with what the model did) is reported with a.fail.
	exec(c *Command, a *cmdArgs) string
}

// languages maps a "# language:" name to a constructor of its interpreter.
var languages = map[string]func() interpreter{
	"t3":       func() interpreter { return &t3Script{} },
	"terminal": func() interpreter { return &terminalHarness{} },
}

// Languages returns the names a "# language:" line may give, sorted.
func Languages() []string {
	names := make([]string, 0, len(languages))
	for n := range languages {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Result is a file's run: the output of each command, next to the file's
// expected output.
type Result struct {
	File *File
	// Outputs holds the output of each command of File.Commands, every line
	// ending in a newline.
	Outputs []string
}

// Run parses and runs one script file. A parse error, an unknown language
// or a bad command stops the run with an *Error naming the file and line.
func Run(path string, data []byte) (*Result, error) {
	f, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	return f.Run()
}

// RunFile reads and runs the script file at path (at most
// replay.MaxInputBytes, the cap of every orchsim input).
func RunFile(path string) (*Result, error) {
	data, err := replay.ReadInput(path, replay.MaxInputBytes)
	if errors.Is(err, replay.ErrTooLarge) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err != nil {
		return nil, err
	}
	return Run(path, data)
}

// Run runs the file's commands on a fresh interpreter of its language.
func (f *File) Run() (res *Result, err error) {
	mk, ok := languages[f.Language]
	if !ok {
		return nil, &Error{f.Path, 1, fmt.Sprintf("unknown language %q (languages: %s)", f.Language, strings.Join(Languages(), ", "))}
	}
	in := mk()
	res = &Result{File: f}
	for _, c := range f.Commands {
		out, err := runOne(in, f, c)
		if err != nil {
			return nil, err
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res, nil
}

// runOne runs one command, turning a.fail's panic into an *Error.
func runOne(in interpreter, f *File, c *Command) (out string, err error) {
	a := &cmdArgs{path: f.Path, cmd: c, used: make([]bool, len(c.Args))}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			out, err = "", e
		}
	}()
	if c.Input != "" {
		a.fail("%s takes no input (lines between the command and ----)", c.Cmd)
	}
	out = in.exec(c, a)
	a.done()
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out, nil
}

// Mismatches returns the indexes of the commands whose output differs
// from the file's expected output.
func (r *Result) Mismatches() []int {
	var out []int
	for i, c := range r.File.Commands {
		if c.Expected != r.Outputs[i] {
			out = append(out, i)
		}
	}
	return out
}

// Diff returns a unified diff (expected, then actual) for every command
// whose output differs, each headed by the file, line and command line;
// "" when all match.
func (r *Result) Diff() string {
	var b strings.Builder
	for _, i := range r.Mismatches() {
		c := r.File.Commands[i]
		d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: lines(c.Expected), B: lines(r.Outputs[i]),
			FromFile: "expected", ToFile: "actual", Context: 3,
		})
		fmt.Fprintf(&b, "%s:%d: %s\n%s", r.File.Path, c.Line, c.Text, d)
		if !strings.HasSuffix(d, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// lines splits s after each newline, without the empty string after the
// last (difflib.SplitLines adds one, which shows as a blank context line).
func lines(s string) []string {
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Rewritten returns the file's text with the actual outputs as expected.
func (r *Result) Rewritten() []byte { return r.File.Render(r.Outputs) }

// Transcript returns the commands and their actual outputs in the file
// format, without the file's comments: what the script did.
func (r *Result) Transcript() string {
	var b strings.Builder
	for i, c := range r.File.Commands {
		fmt.Fprintf(&b, "%s\n----\n%s\n", c.Text, r.Outputs[i])
	}
	return b.String()
}

// WriteAtomic replaces the file at path with data: it writes a temporary
// file in the same directory and renames it over path, so a reader sees
// the old file or the new one, never a part. The file keeps its mode.
func WriteAtomic(path string, data []byte) (err error) {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err = tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), mode); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// skipped are the names discovery ignores: hidden files, editor backups and
// autosaves (as datadriven.Walk does).
var skipped = regexp.MustCompile(`(^\..*)|(.*~$)|(^#.*#$)`)

// Discover returns the script files under root, in lexical order: every
// regular file with a "# language:" line. A file that has a ---- separator
// line but no language line is an error (a script that would silently not
// run); other files (such as a list of case ids) are not scripts. Links
// are followed, to a directory once (a link loop is not walked twice);
// devices, pipes and sockets are not scripts.
func Discover(root string) ([]string, error) {
	return discover(root, map[string]bool{})
}

func discover(root string, seen map[string]bool) ([]string, error) {
	if real, err := filepath.EvalSymlinks(root); err == nil {
		if seen[real] {
			return nil, nil
		}
		seen[real] = true
		if st, err := os.Lstat(root); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			root = real // WalkDir does not follow a link, not even its root
		}
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != root && skipped.MatchString(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			if st.IsDir() {
				found, err := discover(path, seen)
				files = append(files, found...)
				return err
			}
			if !st.Mode().IsRegular() {
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		data, err := replay.ReadInput(path, replay.MaxInputBytes)
		if errors.Is(err, replay.ErrTooLarge) {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err != nil {
			return err
		}
		switch {
		case hasLanguageLine(data):
			files = append(files, path)
		case hasLine(data, "----"):
			return fmt.Errorf("%s: has ---- separators but no \"# language: NAME\" line", path)
		}
		return nil
	})
	return files, err
}

func hasLine(data []byte, line string) bool {
	for _, l := range bytes.Split(data, []byte("\n")) {
		if string(l) == line {
			return true
		}
	}
	return false
}

func hasLanguageLine(data []byte) bool {
	for _, l := range bytes.Split(data, []byte("\n")) {
		if languageLine.Match(bytes.TrimSpace(l)) {
			return true
		}
	}
	return false
}

// cmdArgs reads a command's arguments and remembers which were read: after
// the command ran, an argument left unread is an error (a misspelt or
// misplaced argument must not pass silently).
type cmdArgs struct {
	path string
	cmd  *Command
	used []bool
}

// fail stops the command with an *Error at its line.
func (a *cmdArgs) fail(format string, args ...any) {
	panic(&Error{a.path, a.cmd.Line, fmt.Sprintf(format, args...)})
}

// done fails on any argument left unread.
func (a *cmdArgs) done() {
	for i, arg := range a.cmd.Args {
		if !a.used[i] {
			a.fail("%s: unknown or unused argument %q", a.cmd.Cmd, arg.String())
		}
	}
}

// has reports whether an argument named key is present (with or without
// values), marking every argument of that name read.
func (a *cmdArgs) has(key string) bool {
	found := false
	for i, arg := range a.cmd.Args {
		if arg.Key == key {
			a.used[i], found = true, true
		}
	}
	return found
}

// vals returns the trimmed, non-empty values of the first argument named
// key (nil if absent), marking every argument of that name read.
func (a *cmdArgs) vals(key string) []string {
	var first *Arg
	for i := range a.cmd.Args {
		if a.cmd.Args[i].Key == key {
			if first == nil {
				first = &a.cmd.Args[i]
			}
			a.used[i] = true
		}
	}
	if first == nil {
		return nil
	}
	var out []string
	for _, v := range first.Vals {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// str returns the first value of key, or def.
func (a *cmdArgs) str(key, def string) string {
	v := a.vals(key)
	if len(v) == 0 {
		return def
	}
	return v[0]
}

// text returns key's values joined with ", " (a free text such as a task
// text, written text=(Review the diff, then merge)), or def.
func (a *cmdArgs) text(key, def string) string {
	v := a.vals(key)
	if len(v) == 0 {
		return def
	}
	return strings.Join(v, ", ")
}

// need returns the first value of key and fails if there is none.
func (a *cmdArgs) need(key string) string {
	v := a.str(key, "")
	if v == "" {
		a.fail("%s needs %s=", a.cmd.Cmd, key)
	}
	return v
}

// duration parses key's value as a Go duration, or returns def.
func (a *cmdArgs) duration(key string, def time.Duration) time.Duration {
	v := a.str(key, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		a.fail("%s: %s=%q: %v", a.cmd.Cmd, key, v, err)
	}
	if d < 0 {
		a.fail("%s: %s=%q: a duration must not be negative", a.cmd.Cmd, key, v)
	}
	return d
}

// boolean parses key's value as true or false, or returns def.
func (a *cmdArgs) boolean(key string, def bool) bool {
	v := a.str(key, "")
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		a.fail("%s: %s=%q: want true or false", a.cmd.Cmd, key, v)
	}
	return b
}

// pos returns the next unread bare word.
func (a *cmdArgs) pos(what string) string {
	for i, arg := range a.cmd.Args {
		if !a.used[i] && len(arg.Vals) == 0 {
			a.used[i] = true
			return arg.Key
		}
	}
	a.fail("%s: missing %s", a.cmd.Cmd, what)
	return ""
}

// lookup returns the values of the first argument key=... joined with
// commas (the terminal language's lists), marking only that one read.
func (a *cmdArgs) lookup(key string) (string, bool) {
	for i, arg := range a.cmd.Args {
		if arg.Key == key && len(arg.Vals) > 0 {
			a.used[i] = true
			return strings.Join(arg.Vals, ","), true
		}
	}
	return "", false
}

// list returns lookup's value split at commas (nil if absent or empty).
func (a *cmdArgs) list(key string) []string {
	v, ok := a.lookup(key)
	if !ok || v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// integer returns key's value as an int, or def.
func (a *cmdArgs) integer(key string, def int) int {
	v, ok := a.lookup(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		a.fail("%s: %s=%q is not a number", a.cmd.Cmd, key, v)
	}
	return n
}

// flag reports whether the bare word key is present.
func (a *cmdArgs) flag(key string) bool {
	for i, arg := range a.cmd.Args {
		if arg.Key == key && len(arg.Vals) == 0 {
			a.used[i] = true
			return true
		}
	}
	return false
}

// oneOf returns key's value (or def), failing unless it is one of allowed.
func (a *cmdArgs) oneOf(key, def string, allowed ...string) string {
	v := def
	if s, ok := a.lookup(key); ok {
		v = s
	}
	for _, x := range allowed {
		if v == x {
			return v
		}
	}
	a.fail("%s: %s=%q (want one of %v)", a.cmd.Cmd, key, v, allowed)
	return ""
}

// Expand turns command-line arguments into script files: a file stands for
// itself (whatever its name), a directory for the scripts Discover finds
// under it. A missing path, or a directory holding no script, is an error.
func Expand(args []string) ([]string, error) {
	var files []string
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, arg)
			continue
		}
		found, err := Discover(arg)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no script files (a script has a \"# language: NAME\" line)", arg)
		}
		files = append(files, found...)
	}
	return files, nil
}
