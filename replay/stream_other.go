//go:build !unix

package replay

import "os"

// writeFD appends data to the file the inherited descriptor's name opens
// (no duplicate descriptors here): never truncating, never replacing it.
func writeFD(_ int, name string, data []byte) error {
	return writeOpened(name, os.O_WRONLY|os.O_APPEND, data)
}
