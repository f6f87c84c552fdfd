package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxInputBytes is the most a replay file or a fuzz summary may hold:
// 128 MiB. A shrunk replay file is a few kilobytes and an unshrunk one of a
// long run a few megabytes (about 55 bytes a choice); a summary lists each
// failing seed in about 80 bytes, so a million failures fit. The limit is
// what keeps `orchsim replay /dev/zero` from reading until the system
// runs out of memory.
const MaxInputBytes = 128 << 20

// ErrTooLarge is returned (wrapped) by ReadInput for an input over its limit.
var ErrTooLarge = errors.New("too large")

// ReadInput reads the file at path, refusing one over limit bytes: a
// regular file by its size, before reading anything; a device or pipe
// (/dev/zero, /dev/stdin) after reading limit+1 bytes of it.
func ReadInput(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := fmt.Errorf("%w: over %d MiB, the most an input may hold", ErrTooLarge, limit>>20)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge
	}
	return b, nil
}
