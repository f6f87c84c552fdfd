//go:build unix

package replay

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// CheckStream reports why the descriptor fd (named name) cannot be
// written: it is not open, or it is open for reading only (/dev/stdin, a
// descriptor redirected with <). It writes nothing.
func CheckStream(fd int, name string) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if errors.Is(err, unix.EBADF) {
		return fmt.Errorf("file descriptor %d is not open", fd)
	}
	if err != nil {
		return &os.PathError{Op: "fcntl", Path: name, Err: err}
	}
	if acc := flags & unix.O_ACCMODE; acc != unix.O_WRONLY && acc != unix.O_RDWR {
		return fmt.Errorf("file descriptor %d is open for reading only", fd)
	}
	return nil
}

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
