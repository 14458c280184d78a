package builtin

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// errNotRegular is why dataFS refuses to open a device, FIFO or socket.
var errNotRegular = errors.New("not a regular file")

// dataFS is the real file system rooted at "/", like os.DirFS("/"), except
// that Open only ever returns a directory or a regular file. Walks already
// pass over special files by the type their directory lists; dataFS makes
// sure of it when the entry was replaced since, or reached through a
// symbolic link (a .gitignore, a named target).
type dataFS struct{}

// Open opens the named file for reading without blocking: it opens with
// O_NONBLOCK, since opening a FIFO for reading otherwise waits for a
// writer, and then refuses anything but a directory or a regular file with
// a *fs.PathError wrapping errNotRegular. Reads of a regular file are not
// affected by O_NONBLOCK.
func (dataFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := os.OpenFile(path.Join("/", name), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close() //nolint:errcheck // read only, and err is the failure to report
		return nil, err
	}
	if !info.Mode().IsRegular() && !info.IsDir() {
		f.Close() //nolint:errcheck // read only, and the error is that it is not a file
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotRegular}
	}
	return f, nil
}

// Stat describes the named file, following symbolic links, without opening
// it.
func (dataFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	return os.Stat(path.Join("/", name))
}

// ReadDir lists the named directory sorted by name.
func (dataFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	return os.ReadDir(path.Join("/", name))
}
