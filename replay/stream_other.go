//go:build !unix

package replay

import (
	"fmt"
	"os"
)

// CheckStream reports why the descriptor fd (named name) cannot be
// written, as far as this platform can tell without writing: its name
// must stat (an open descriptor); how it was opened is not checked, so a
// read-only one fails at the write.
func CheckStream(fd int, name string) error {
	if _, err := os.Stat(name); err != nil {
		return fmt.Errorf("file descriptor %d is not open: %w", fd, err)
	}
	return nil
}

// writeFD appends data to the file the inherited descriptor's name opens
// (no duplicate descriptors here): never truncating, never replacing it.
func writeFD(_ int, name string, data []byte) error {
	return writeOpened(name, os.O_WRONLY|os.O_APPEND, data)
}
