// Package replay reads and writes replay files: the JSON record of one run
// (scenario, profile, seed, horizon, choice tape, violation, fingerprint)
// that `orchsim replay` re-runs byte for byte. Files are versioned and
// written atomically.
package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Format is the value of every replay file's "format" field.
const Format = "orchsim-replay"

// Version is the format version this build writes. Readers accept exactly
// the versions they know: this one, and LegacyVersion.
const Version = 2

// LegacyVersion is the previous format: the same fields, but its
// fingerprint was FNV-1a over the canonical encoding, which this build no
// longer computes (the fingerprint became a word-wise hash in version 2).
// Its tape and settings replay as before; its fingerprint cannot be
// compared (FingerprintComparable), and re-recording it (orchsim shrink)
// writes the current version.
const LegacyVersion = 1

// FingerprintComparable reports whether f's recorded fingerprint was
// computed the way this build computes it.
func (f *File) FingerprintComparable() bool { return f.Version == Version }

// File is one replay file.
type File struct {
	Format   string `json:"format"`
	Version  int    `json:"version"`
	Scenario string `json:"scenario"`
	// Profile is the preset (reported or fixed); Fixes and Mutants are the
	// single switches and mutants on top of it, and Unfix the fixes turned
	// off after them (--unfix; model.Spec).
	Profile string   `json:"profile"`
	Fixes   []string `json:"fixes,omitempty"`
	Unfix   []string `json:"unfix,omitempty"`
	Mutants []string `json:"mutants,omitempty"`
	Seed    uint64   `json:"seed"`
	// Strategy is the exploration strategy (random, swarm, pct, commit or branch).
	Strategy string `json:"strategy"`
	// Off lists actors the shrinker switched off.
	Off     []string `json:"off,omitempty"`
	Horizon Duration `json:"horizon"`
	// EventBudget is the run's event budget when it was not the default
	// (run --event-budget); 0 (absent) is the default.
	EventBudget uint64 `json:"event_budget,omitempty"`
	// KeepGoing records a run --keep-going run: it went on past its first
	// violation (scenarios.Config.KeepGoing), which its fingerprint covers.
	KeepGoing   bool           `json:"keep_going,omitempty"`
	Violation   *sim.Violation `json:"violation,omitempty"`
	Fingerprint string         `json:"fingerprint"`
	Events      uint64         `json:"events"`
	// Compacted records that the tape leaves out each site's trailing zero
	// choices (shrinking writes it so): a draw that finds no recorded choice
	// left is the implicit 0, not a departure from the tape.
	Compacted bool `json:"compacted,omitempty"`
	// TapeHash is TapeHash(f) as written (16 hex digits): what decides the
	// run's draws (scenario, seed, strategy, off, compacted and the tape).
	// Parse refuses a file whose fields no longer hash to it (ErrTapeEdited).
	// Profile, fixes, mutants and horizon are left out, so that they can be
	// edited to test a fix. A file without it (written before it was added)
	// is read unchecked.
	//
	// A version-2 file with a tape, or compacted, must carry it (every
	// version-2 writer writes one); when present it must be 16 lowercase hex
	// digits ("" and null are refused, not read as absent).
	TapeHash string `json:"tape_hash,omitempty"`
	// SettingsHash is SettingsHash(f) as written: the settings a user may
	// edit to test a fix (profile, fixes, unfix, mutants, horizon, event
	// budget).
	// When they no longer hash to it (SettingsEdited), the replay is judged
	// by its outcome only: the settings change what is drawn, so neither the
	// fingerprint nor the tape can be followed. A file without it is judged
	// strictly, as before it was added.
	SettingsHash string `json:"settings_hash,omitempty"`
	// Tape is the choice tape. When absent the run is re-drawn from Seed;
	// when present, even as [], the run replays exactly these choices (an
	// empty tape answers every draw with 0, and a replay that draws reports
	// that it did not follow it). Marshal omits an empty tape unless it is
	// compacted: a run that drew nothing re-draws the same nothing from its
	// seed.
	Tape []sim.Choice `json:"tape,omitempty"`
}

// Duration is a time.Duration encoded as Go's duration string ("48h0m0s").
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"48h\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// FormatFingerprint renders a fingerprint as 16 hex digits.
func FormatFingerprint(f uint64) string { return fmt.Sprintf("%016x", f) }

// ParseFingerprint parses 16 lowercase hex digits, as FormatFingerprint
// writes them (fingerprints are compared as strings).
func ParseFingerprint(s string) (uint64, error) {
	if len(s) != 16 || strings.IndexFunc(s, func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') }) >= 0 {
		return 0, fmt.Errorf("fingerprint %q is not 16 lowercase hex digits", s)
	}
	return strconv.ParseUint(s, 16, 64)
}

// ErrUnknownVersion is returned (wrapped) for a replay file of a format
// version this build does not know.
var ErrUnknownVersion = errors.New("unknown replay format version")

// ErrTapeEdited is returned (wrapped) for a replay file whose tape_hash
// does not match its tape: the tape, seed, scenario, strategy or off was
// edited or damaged after the file was written.
var ErrTapeEdited = errors.New("the tape was edited or damaged")

// TapeHash hashes what decides a replay's draws, as Marshal writes it: the
// scenario, seed, strategy, switched-off actors, the compacted flag, and the
// tape, present or absent, entry by entry (actor, label, range, value). It
// is the first 8 bytes of a SHA-256 over a length-prefixed encoding, as 16
// hex digits.
func TapeHash(f *File) string {
	h := sha256.New()
	var buf []byte
	str := func(s string) { buf = append(binary.AppendUvarint(buf, uint64(len(s))), s...) }
	num := func(v uint64) { buf = binary.AppendUvarint(buf, v) }
	str("orchsim-tape-hash/1")
	str(f.Scenario)
	num(f.Seed)
	str(f.Strategy)
	num(uint64(len(f.Off)))
	for _, a := range f.Off {
		str(a)
	}
	flag := func(b bool) {
		if b {
			num(1)
		} else {
			num(0)
		}
	}
	flag(f.Compacted)
	flag(f.Tape != nil)
	num(uint64(len(f.Tape)))
	for _, c := range f.Tape {
		str(c.Actor)
		str(c.Label)
		num(c.N)
		num(c.Value)
		if len(buf) > 4096 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return fmt.Sprintf("%016x", h.Sum(nil)[:8])
}

// SettingsHash hashes the settings a user may edit to test a fix, as
// Marshal writes them: the profile ("" counts as reported), the fixes and
// the mutants (as sets), the horizon, the event budget (0 for the
// default; readers map an explicit default to 0 first) and, when there is
// one, the unfix set, and keep_going when set (so files written before
// they existed keep their hash). It is the first 8 bytes
// of a SHA-256 over a length-prefixed encoding, as 16 hex digits.
func SettingsHash(f *File) string {
	var buf []byte
	str := func(s string) { buf = append(binary.AppendUvarint(buf, uint64(len(s))), s...) }
	num := func(v uint64) { buf = binary.AppendUvarint(buf, v) }
	list := func(xs []string) {
		xs = slices.Compact(slices.Sorted(slices.Values(xs))) // a set
		num(uint64(len(xs)))
		for _, x := range xs {
			str(x)
		}
	}
	str("orchsim-settings-hash/1")
	profile := f.Profile
	if profile == "" {
		profile = "reported" // what an absent profile runs as
	}
	str(profile)
	list(f.Fixes)
	list(f.Mutants)
	num(uint64(f.Horizon))
	num(f.EventBudget)
	if len(f.Unfix) > 0 {
		str("unfix")
		list(f.Unfix)
	}
	if f.KeepGoing {
		str("keep-going")
	}
	sum := sha256.Sum256(buf)
	return fmt.Sprintf("%016x", sum[:8])
}

// SettingsEdited reports whether f carries a settings_hash its settings no
// longer hash to: its profile, fixes, unfix, mutants, horizon or event budget were
// edited after it was written (to test a fix).
func (f *File) SettingsEdited() bool {
	return f.SettingsHash != "" && SettingsHash(f) != f.SettingsHash
}

// Read loads and validates a replay file of at most MaxInputBytes.
func Read(path string) (*File, error) {
	b, err := ReadInput(path, MaxInputBytes)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse decodes and validates a replay file's bytes. A leading UTF-8
// byte-order mark is skipped (RFC 8259 lets parsers ignore it; editors on
// some systems add one), as merge-summaries does.
func Parse(b []byte) (*File, error) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("malformed replay file: %w", err)
	}
	// One object, then only white space: not a second object, not garbage.
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("malformed replay file: more data after the JSON object ends at byte %d", end)
	}
	keys, err := scanKeys(b)
	if err != nil {
		return nil, fmt.Errorf("malformed replay file: %w", err)
	}
	if f.Format != Format {
		return nil, fmt.Errorf("not a replay file: format is %q, want %q", f.Format, Format)
	}
	if f.Version != Version && f.Version != LegacyVersion {
		return nil, fmt.Errorf("%w %d (this build reads versions %d and %d)", ErrUnknownVersion, f.Version, LegacyVersion, Version)
	}
	if f.Scenario == "" {
		return nil, errors.New("malformed replay file: no scenario")
	}
	if f.Horizon <= 0 {
		return nil, fmt.Errorf("malformed replay file: horizon %s is not positive", time.Duration(f.Horizon))
	}
	if _, err := ParseFingerprint(f.Fingerprint); err != nil {
		return nil, fmt.Errorf("malformed replay file: %w", err)
	}
	if err := checkSettings(&f, keys); err != nil {
		return nil, fmt.Errorf("malformed replay file: %w", err)
	}
	for i, c := range f.Tape {
		if c.N == 0 || c.Value >= c.N {
			return nil, fmt.Errorf("malformed replay file: tape entry %d (%s %s) has value %d outside [0,%d)", i, c.Actor, c.Label, c.Value, c.N)
		}
	}
	for _, k := range []string{"tape_hash", "settings_hash"} {
		v := map[string]string{"tape_hash": f.TapeHash, "settings_hash": f.SettingsHash}[k]
		if _, err := ParseFingerprint(v); keys[k] && err != nil {
			return nil, fmt.Errorf("malformed replay file: %s %q is not 16 lowercase hex digits", k, v)
		}
	}
	if f.Version == Version && !keys["tape_hash"] && (f.Tape != nil || f.Compacted) {
		return nil, fmt.Errorf("%w: a version %d file with a tape or compacted must have a tape_hash (re-record the run with run --out or shrink)", ErrTapeEdited, Version)
	}
	if keys["tape_hash"] {
		if got := TapeHash(&f); got != f.TapeHash {
			return nil, fmt.Errorf("%w: its scenario, seed, strategy, off, compacted and tape hash to %s, not the recorded tape_hash %s (profile, fixes, mutants, horizon and event_budget may be edited; re-record the run with run --out or shrink)",
				ErrTapeEdited, got, f.TapeHash)
		}
	}
	return &f, nil
}

// Write stores f at path atomically: it writes a temporary file in the same
// directory, syncs it and renames it over path, so a reader never sees a
// half-written file.
func Write(path string, f *File) error {
	b, err := Marshal(f)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, b)
}

// Marshal encodes f: indented fields, then the tape with one choice per
// line so that a committed replay file diffs line by line. It sets f's
// format, version and tape_hash. An empty tape is left out (the run is
// re-drawn from its seed), unless it is compacted: an empty compacted tape
// is written "tape": [] (every draw answers 0).
func Marshal(f *File) ([]byte, error) {
	f.Format, f.Version = Format, Version
	written := *f // the tape as written, and so as read back and hashed
	if len(f.Tape) == 0 {
		written.Tape = nil
		if f.Compacted {
			written.Tape = []sim.Choice{}
		}
	}
	f.TapeHash = TapeHash(&written)
	f.SettingsHash = SettingsHash(f)
	head := *f
	head.Tape = nil
	b, err := json.MarshalIndent(&head, "", "  ")
	if err != nil {
		return nil, err
	}
	if written.Tape == nil {
		return append(b, '\n'), nil
	}
	if len(f.Tape) == 0 {
		return append(b[:len(b)-2], ",\n  \"tape\": []\n}\n"...), nil
	}
	out := append(b[:len(b)-2], ",\n  \"tape\": [\n"...) // drop the closing "\n}"
	for i, c := range f.Tape {
		line, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		out = append(out, "    "...)
		out = append(out, line...)
		if i < len(f.Tape)-1 {
			out = append(out, ',')
		}
		out = append(out, '\n')
	}
	return append(out, "  ]\n}\n"...), nil
}

// WriteTarget returns the file a write to path lands on: path itself, or,
// when path is a symbolic link, the file the link points to, followed
// through any chain of links whether or not that file exists yet (a
// dangling link names the file to create).
func WriteTarget(path string) (string, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real, nil
	}
	if _, err := os.Stat(path); err == nil {
		// It exists through a link EvalSymlinks cannot spell, such as
		// /dev/stdout -> /proc/self/fd/1 -> pipe:[123]: write it in place.
		return path, nil
	}
	orig := path
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil // the file to create, or not a link
		}
		if hops == 40 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", orig)
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dir := filepath.Dir(path)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			dest = filepath.Join(dir, dest)
		}
		path = dest
	}
}

// WriteFileAtomic writes data to path through a synced temporary file and a
// rename, so a reader never sees a half-written file. A symbolic link is
// followed (its target is replaced, not the link; a dangling link's target
// is created, see WriteTarget); a path that exists and is not a regular file
// (a device such as /dev/null, a pipe) is written to directly, since
// renaming over it would replace the device. A path naming an inherited
// descriptor (/dev/stdout, /dev/fd/N, see StreamFD) is written as a stream:
// to the descriptor, after what it already holds, never truncating or
// replacing the file behind it.
func WriteFileAtomic(path string, data []byte) error {
	if path == "" {
		return errors.New("empty file name")
	}
	if fd, ok := StreamFD(path); ok {
		return writeFD(fd, path, data)
	}
	path, err := WriteTarget(path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		if !fi.Mode().IsRegular() {
			return writeOpened(path, os.O_WRONLY|os.O_TRUNC, data)
		}
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; the result is an ordinary output file.
	if err := os.Chmod(name, 0o644); err != nil {
		return err
	}
	return os.Rename(name, path)
}

// writeOpened writes data to the existing file name opened with flag (a
// device or a stream: nothing to rename over).
func writeOpened(name string, flag int, data []byte) error {
	f, err := os.OpenFile(name, flag, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// scanKeys walks the JSON object b (already decoded once, so well formed)
// token by token, refusing what encoding/json accepts silently: a key
// given twice in one object (the last would win) and a key that matches a
// field only case-insensitively ("SEED"). It returns the top-level keys.
func scanKeys(b []byte) (map[string]bool, error) {
	return ScanKeys(b, reflect.TypeFor[File]())
}

// ScanKeys is scanKeys for JSON that decodes into a value of type t (a
// struct, or a pointer to one; embedded structs' fields count as its own):
// it refuses a key given twice in one object and a key that matches a
// field of t only case-insensitively, and returns the top-level keys.
// merge-summaries reads its summaries with it.
func ScanKeys(b []byte, t reflect.Type) (map[string]bool, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	keys := map[string]bool{}
	if err := scanValue(dec, t, "", keys); err != nil {
		return nil, err
	}
	return keys, nil
}

// jsonFields adds the JSON names of struct type t's fields to fields,
// flattening embedded structs as encoding/json does.
func jsonFields(t reflect.Type, fields map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				jsonFields(ft, fields)
			}
			continue
		}
		if name == "" && f.IsExported() {
			name = f.Name
		}
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
}

// scanValue scans the next JSON value, expected to decode into t (nil when
// unknown); where names it in messages; keys, when not nil, collects an
// object's keys.
func scanValue(dec *json.Decoder, t reflect.Type, where string, keys map[string]bool) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := scanValue(dec, elem, fmt.Sprintf("%s[%d]", where, i), nil); err != nil {
				return err
			}
		}
	case json.Delim('{'):
		fields := map[string]reflect.Type{}
		if t != nil && t.Kind() == reflect.Struct {
			jsonFields(t, fields)
		}
		if keys == nil {
			keys = map[string]bool{}
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			name := key
			if where != "" {
				name = where + "." + key
			}
			if keys[key] {
				return fmt.Errorf("key %q appears twice", name)
			}
			keys[key] = true
			ft, ok := fields[key]
			if !ok {
				for f := range fields {
					if strings.EqualFold(f, key) {
						return fmt.Errorf("key %q must be spelled %q (keys are case-sensitive)", name, f)
					}
				}
			}
			if err := scanValue(dec, ft, name, nil); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	_, err = dec.Token() // the closing ] or }
	return err
}

// checkSettings refuses what the command line refuses: an empty profile
// written out, an empty or repeated name in fixes, unfix or mutants, and an
// event_budget of 0 written out (leave a setting out for its default).
func checkSettings(f *File, keys map[string]bool) error {
	if keys["profile"] && f.Profile == "" {
		return errors.New(`"profile" is empty (leave it out for reported)`)
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"fixes", f.Fixes}, {"unfix", f.Unfix}, {"mutants", f.Mutants}} {
		key, names := l.key, l.names
		seen := map[string]bool{}
		for _, n := range names {
			if n == "" {
				return fmt.Errorf("%q has an empty name", key)
			}
			if seen[n] {
				return fmt.Errorf("%q names %s twice", key, n)
			}
			seen[n] = true
		}
	}
	if keys["event_budget"] && f.EventBudget == 0 {
		return errors.New(`"event_budget" is 0 (leave it out for the default)`)
	}
	return nil
}
