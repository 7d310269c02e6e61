// Package program finds the program the init runs, the way execvp(3) and a
// shell do, and maps the failures to a shell's exit codes.
package program

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Exit codes a shell uses when it cannot run a command.
const (
	ExitNotExecutable = 126
	ExitNotFound      = 127
)

// Error says why a program cannot be run and the exit code a shell would
// give for it.
type Error struct {
	Path   string
	Reason string
	Code   int
}

func (e *Error) Error() string { return e.Path + ": " + e.Reason }

// DefaultPath is searched when PATH is unset, as glibc's execvp does.
const DefaultPath = "/bin:/usr/bin"

// LookPath returns the file to execute for name. A name with a slash is used
// as it is; otherwise each directory of path is tried in order (an empty
// entry means the working directory) and the first executable regular file
// wins. When only non-executable candidates exist, the first one is reported
// with 126, like bash; when there are none, 127.
func LookPath(name string, path string, pathSet bool) (string, error) {
	if name == "" {
		return "", &Error{name, "command not found", ExitNotFound}
	}
	if strings.Contains(name, "/") {
		if err := checkFile(name); err != nil {
			return "", err
		}
		return name, nil
	}
	if !pathSet {
		path = DefaultPath
	}
	var denied error
	for dir := range strings.SplitSeq(path, ":") {
		if dir == "" {
			dir = "."
		}
		candidate := dir + "/" + name
		err := checkFile(candidate)
		if err == nil {
			return candidate, nil
		}
		if e := err.(*Error); e.Code == ExitNotExecutable && denied == nil {
			denied = err
		}
	}
	if denied != nil {
		return "", denied
	}
	return "", &Error{name, "command not found", ExitNotFound}
}

// checkFile reports why path cannot be executed, or nil when it can be.
func checkFile(path string) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return ExecError(path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return &Error{path, "Is a directory", ExitNotExecutable}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return &Error{path, "Permission denied", ExitNotExecutable}
	}
	if err := executable(path); err != nil {
		return ExecError(path, err)
	}
	return nil
}

// executable is access(path, X_OK) as the kernel answers it. (unix.Access
// would bring x/sys's emulation of faccessat2's flags, with getgroups, into
// the binary; the init needs none of it.)
func executable(path string) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	atFDCWD := unix.AT_FDCWD
	_, _, errno := unix.Syscall6(unix.SYS_FACCESSAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(p)), unix.X_OK, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// ExecError turns the error of stat(2) or execve(2) on path into an *Error
// with a shell's exit code: 127 when the file or, for an existing file, its
// interpreter does not exist, 126 for everything else.
func ExecError(path string, err error) error {
	errno, _ := err.(unix.Errno)
	switch errno {
	case unix.ENOENT, unix.ENOTDIR:
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil {
			return &Error{path, "bad interpreter: " + errno.Error(), ExitNotFound}
		}
		return &Error{path, "No such file or directory", ExitNotFound}
	case unix.EACCES:
		return &Error{path, "Permission denied", ExitNotExecutable}
	case unix.ENOEXEC:
		return &Error{path, "cannot execute binary file: Exec format error", ExitNotExecutable}
	case 0:
		return &Error{path, err.Error(), ExitNotExecutable}
	}
	return &Error{path, errno.Error(), ExitNotExecutable}
}
