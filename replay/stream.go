package replay

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StreamFD reports whether path names a file descriptor this process
// inherited, and which: /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N, /proc/thread-self/fd/N or /proc/<this pid>/fd/N, by
// name or through a chain of symbolic links. Such a path is a stream: a
// write goes to the descriptor, after what was written to it before, and
// must never truncate or replace the file behind it (with stdout
// redirected to a file, /dev/stdout resolves to that file, and replacing
// it would lose the rest of the output).
func StreamFD(path string) (int, bool) {
	for hops := 0; hops <= 40 && path != ""; hops++ {
		if fd, ok := streamName(path); ok {
			return fd, true
		}
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return 0, false
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return 0, false
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return 0, false
}

// streamName recognises the names of StreamFD without following links.
func streamName(path string) (int, bool) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	switch path {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"} {
		if n, ok := strings.CutPrefix(path, dir); ok {
			fd, err := strconv.Atoi(n)
			if err != nil || fd < 0 || strconv.Itoa(fd) != n {
				return 0, false
			}
			return fd, true
		}
	}
	return 0, false
}
