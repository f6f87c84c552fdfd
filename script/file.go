package script

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Arg is one argument of a command line: a bare word (no Vals), key=value
// (one value) or key=(v1, v2, ...) (one value per top-level comma; a value
// may hold spaces and nested parentheses).
type Arg struct {
	Key  string
	Vals []string
}

// String renders the argument as a command line writes it.
func (a Arg) String() string {
	switch len(a.Vals) {
	case 0:
		return a.Key
	case 1:
		return a.Key + "=" + a.Vals[0]
	}
	return a.Key + "=(" + strings.Join(a.Vals, ", ") + ")"
}

// Command is one command of a script file and the output the file expects
// from it.
type Command struct {
	// Line is the 1-based line of the command in its file.
	Line int
	// Text is the command line as written (continuation lines joined).
	Text string
	// Cmd is the command's name, Args its arguments in file order.
	Cmd  string
	Args []Arg
	// Input is the text between the command line and its ---- separator,
	// trimmed (no language of this package takes any).
	Input string
	// Expected is the output under the separator, each line ending in a
	// newline ("" when the file expects none).
	Expected string
	// pre is the file's text from the end of the previous command's output
	// up to the separator: comments, blank lines, the command line, input.
	pre string
}

// String renders the command line from Cmd and Args (normalized: one
// space between arguments, a single value without parentheses).
func (c *Command) String() string {
	fields := []string{c.Cmd}
	for _, a := range c.Args {
		fields = append(fields, a.String())
	}
	return strings.Join(fields, " ")
}

// File is a parsed script file.
type File struct {
	// Path is the file's name as given to Parse (used in messages).
	Path string
	// Language is the name on the file's "# language: NAME" line.
	Language string
	// Commands are the file's commands in order.
	Commands []*Command
	// tail is the text after the last command's output.
	tail string
}

// Error is a problem with a script file or one of its commands: a parse
// error, an unknown command or argument, an argument left unread, a value
// that does not parse. Its text is "file:line: message".
type Error struct {
	Path string
	Line int
	Msg  string
}

// Error returns "file:line: message".
func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg) }

// languageLine is the directive naming a file's language.
var languageLine = regexp.MustCompile(`^#\s*language:\s*(\S+)\s*$`)

// Parse reads a script file's text. path names the file in errors. It
// fails with an *Error on a line it cannot parse, a missing or repeated
// "# language:" line, or a bad ---- ---- block.
func Parse(path string, data []byte) (*File, error) {
	f := &File{Path: path}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1) // a line may be as long as the file (RunFile caps it)
	sc.Buffer(nil, 16<<20)
	n := 0
	scan := func() bool {
		if sc.Scan() {
			n++
			return true
		}
		return false
	}
	var pre strings.Builder
	emit := func(s string) { pre.WriteString(s); pre.WriteByte('\n') }
	langAt := 0
	for scan() {
		raw := sc.Text()
		emit(raw)
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "#") {
			if m := languageLine.FindStringSubmatch(line); m != nil {
				if langAt != 0 {
					return nil, &Error{path, n, fmt.Sprintf("a second language line (the first is line %d)", langAt)}
				}
				if len(f.Commands) > 0 {
					return nil, &Error{path, n, "the language line must come before the first command"}
				}
				f.Language, langAt = m[1], n
			}
			continue
		}
		start := n
		// A command line may continue on the next line after a backslash.
		for strings.HasSuffix(line, `\`) && scan() {
			emit(sc.Text())
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(sc.Text())
		}
		cmd, args, err := parseLine(line)
		if err != nil {
			return nil, &Error{path, start, err.Error()}
		}
		if cmd == "" {
			continue
		}
		c := &Command{Line: start, Text: strings.TrimSpace(line), Cmd: cmd, Args: args}
		var input strings.Builder
		separator := false
		for scan() {
			if sc.Text() == "----" {
				separator = true
				break
			}
			emit(sc.Text())
			input.WriteString(sc.Text() + "\n")
		}
		c.Input = strings.TrimSpace(input.String())
		if separator {
			expected, err := readExpected(scan, sc)
			if err != nil {
				return nil, &Error{path, n, err.Error()}
			}
			c.Expected = expected
		}
		c.pre = pre.String()
		pre.Reset()
		f.Commands = append(f.Commands, c)
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{path, n + 1, err.Error()}
	}
	f.tail = pre.String()
	if f.Language == "" {
		return nil, &Error{path, 1, "no \"# language: NAME\" line before the first command (languages: " +
			strings.Join(Languages(), ", ") + ")"}
	}
	return f, nil
}

// readExpected reads the output under a ---- separator: up to the first
// blank line, or, when the first line is another ----, up to a ----
// ---- pair (the form for output holding blank lines), which must be
// followed by a blank line or the end of the file.
func readExpected(scan func() bool, sc *bufio.Scanner) (string, error) {
	var buf strings.Builder
	line := ""
	if scan() {
		line = sc.Text()
	}
	if line != "----" {
		for strings.TrimSpace(line) != "" {
			buf.WriteString(line + "\n")
			if !scan() {
				break
			}
			line = sc.Text()
		}
		return buf.String(), nil
	}
	for scan() {
		line = sc.Text()
		if line == "----" && scan() {
			if sc.Text() == "----" {
				if scan() && sc.Text() != "" {
					return "", fmt.Errorf("non-blank line after the closing ---- ---- pair")
				}
				return buf.String(), nil
			}
			buf.WriteString(line + "\n")
			line = sc.Text()
		}
		buf.WriteString(line + "\n")
	}
	return buf.String(), nil
}

// parseLine splits a command line into the command and its arguments:
// key, key=value, key=(v1, v2, ...) with nested parentheses allowed and the
// spaces after a top-level comma dropped.
func parseLine(line string) (string, []Arg, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return "", nil, nil
	}
	orig := line
	bad := func() error {
		return fmt.Errorf("cannot parse the command line at column %d: %s", len(orig)-len(line)+1, orig)
	}
	until := func(chars string) string {
		i := strings.IndexAny(line, chars)
		if i < 0 {
			i = len(line)
		}
		s := line[:i]
		line = line[i:]
		return s
	}
	cmd := until(" ")
	line = strings.TrimSpace(line)
	var args []Arg
	for line != "" {
		var a Arg
		if a.Key = until(" ="); a.Key == "" {
			return "", nil, bad()
		}
		if line != "" && line[0] == '=' {
			line = line[1:]
			switch {
			case line == "" || line[0] == ' ':
				a.Vals = []string{""}
			case line[0] != '(':
				a.Vals = []string{until(" ")}
			default:
				pos, depth, start := 1, 1, 1
				for depth > 0 {
					if pos == len(line) {
						return "", nil, bad()
					}
					r, size := utf8.DecodeRuneInString(line[pos:])
					pos += size
					switch r {
					case ',':
						if depth == 1 {
							a.Vals = append(a.Vals, line[start:pos-1])
							for pos < len(line) && line[pos] == ' ' {
								pos++
							}
							start = pos
						}
					case '(':
						depth++
					case ')':
						depth--
					}
				}
				a.Vals = append(a.Vals, line[start:pos-1])
				line = line[pos:]
			}
		}
		for _, b := range args {
			if b.Key == a.Key {
				return "", nil, fmt.Errorf("argument %q given twice: %s", a.Key, orig)
			}
		}
		args = append(args, a)
		line = strings.TrimSpace(line)
	}
	return cmd, args, nil
}

// blankLine matches a line holding only spaces and tabs.
var blankLine = regexp.MustCompile(`(?m)^[\t ]*\n`)

// Render returns the file's text with outputs (one per command, as Run
// returns them) as the expected output: the file -rewrite writes. The
// comments, blank lines and command lines are kept byte for byte; an
// output holding a blank line is written between ---- ---- pairs.
func (f *File) Render(outputs []string) []byte {
	var b bytes.Buffer
	for i, c := range f.Commands {
		b.WriteString(c.pre)
		b.WriteString("----\n")
		out := outputs[i]
		if blankLine.MatchString(out) {
			b.WriteString("----\n" + out + "----\n----\n\n")
		} else {
			b.WriteString(out + "\n")
		}
	}
	b.WriteString(f.tail)
	data := b.Bytes()
	if l := len(data); l > 2 && data[l-1] == '\n' && data[l-2] == '\n' {
		data = data[:l-1]
	}
	return data
}
