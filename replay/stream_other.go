//go:build !unix

package replay

import "os"

// writeFD appends data to the file the inherited descriptor's name opens
// (no duplicate descriptors here): never truncating, never replacing it.
func writeFD(_ int, name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
