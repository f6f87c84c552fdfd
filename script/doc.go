// Package script runs orchsim's script files: hand-written stories that
// drive one model world command by command, each command followed by the
// output it must print (the trace events it caused, then its result). The
// files are reproductions and fidelity cases whose expected output is
// reviewed like code; `orchsim script FILE...` and the go tests run them.
//
// # File format
//
// The format is datadriven's (github.com/cockroachdb/datadriven), read
// here without a *testing.T so the command line can run it too:
//
//	# a comment (a line starting with #); blank lines separate commands
//	# language: t3
//
//	command key=value key=(a, b) word
//	----
//	expected output, up to the first blank line
//
//	command
//	----
//	----
//	expected output that holds
//
//	a blank line
//	----
//	----
//
// A command line may continue on the next line after a trailing backslash.
// Values in parentheses are split at top-level commas (the spaces after a
// comma are dropped) and may hold spaces and nested parentheses. Output
// holding a blank line is written between ---- ---- pairs (-rewrite does
// so). A bad command line, an unknown command, a misspelt or unused
// argument and a value that does not parse are errors naming file:line
// (*Error); what the model does is output, never an error.
//
// # Choosing the language
//
// Every script file names its language on a comment line before its first
// command:
//
//	# language: t3         the T3 server world (script/t3.go)
//	# language: terminal   the agent-code desktop app (script/terminal.go)
//
// The file, not its directory, says how to run it, so a new script
// directory anywhere under scenarios/testdata needs no code change, and a
// file copied elsewhere still runs. Discover finds every such file under a
// directory; a file with ---- separators but no language line is an error
// there rather than a script that silently never runs.
//
// # Invariants and headers
//
// A script prints only what it names: the terminal language's new prints
// the invariants its check= names, or the group ("terminal") when it names
// none, so registering a new invariant changes no expected output.
package script

// EnvironmentID is the environment id of every script world (the same as
// scenarios.EnvironmentID; a test keeps them equal).
const EnvironmentID = "env-1"
