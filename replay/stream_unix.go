//go:build unix

package replay

import (
	"os"
	"syscall"
)

// writeFD writes data to the inherited descriptor fd through a duplicate
// of it: the duplicate shares the descriptor's offset, so the data lands
// after what the process wrote there before, and what it writes after
// lands after the data.
func writeFD(fd int, name string, data []byte) error {
	dup, err := syscall.Dup(fd)
	if err != nil {
		return &os.PathError{Op: "write", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(dup), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
