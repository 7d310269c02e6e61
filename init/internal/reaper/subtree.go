package reaper

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// SignalSubtree sends sig, then followUp unless it is 0, to every process of
// the init's subtree and returns how many processes could be signalled and
// how many refused (EPERM: a process of another user); without count, as
// PID 1, it counts nothing. Past deadline (CLOCK_MONOTONIC, see Monotonic;
// 0 for none) it finds and signals no more descendants: under a fork bomb
// that takes every CPU, a walk of /proc can take seconds, and the caller has
// a bound to keep.
//
// Members of group (unless it is 0) are not sent sig and followUp again:
// the caller has sent them to that process group already, and a process
// handles each delivery (to many programs a second SIGTERM is an order to
// quit at once, without the graceful shutdown the first one started). They
// are only checked (signal 0), so that they are counted as the others are.
//
// As PID 1 of a PID namespace every other process of the namespace is in its
// care: kill(-1) reaches all of them but the init itself, and silently skips
// those the init may not signal, which are then counted from /proc (with
// count). The kernel makes kill(-1) atomic with respect to fork(2): a process
// forking meanwhile either is reached with its child or fails to fork.
//
// Otherwise the init is a child subreaper (or could not become one) and
// signals only its descendants, found by walking parent pids in /proc. Each
// one is pinned before any is signalled (see pinDescendants), so that a
// process that exits and whose pid is reused in between is never signalled
// in its place: the signal is sent through the pin with pidfd_send_signal(2). Where that call is refused (Linux
// before 5.1 answers ENOSYS; a seccomp profile that does not know it, ENOSYS
// or EPERM), the signal goes by pid with kill(2), if the pinned process has
// not been reaped: a process of another user then still refuses (EPERM).
// Without /proc,
// nothing is signalled (see FindsDescendants).
func SignalSubtree(sig, followUp unix.Signal, group int, pid1, count bool, deadline time.Duration) (sent, refused int) {
	tally := func(err error) {
		switch err {
		case nil:
			sent++
		case unix.EPERM:
			refused++
		}
	}
	if pid1 {
		unix.Kill(-1, sig)
		if followUp != 0 {
			unix.Kill(-1, followUp)
		}
		if !count || procSelf() != 1 {
			return 0, 0 // /proc shows another PID namespace
		}
		for _, pid := range processes() {
			if pid != 1 {
				tally(unix.Kill(pid, 0))
			}
		}
		return sent, refused
	}
	pinned := pinDescendants(deadline)
	for _, p := range pinned {
		if expired(deadline) {
			break
		}
		if group != 0 && p.pgrp == group {
			tally(signalPinned(p, 0))
			continue
		}
		err := signalPinned(p, sig)
		if followUp != 0 && err == nil {
			signalPinned(p, followUp)
		}
		tally(err)
	}
	closeAll(pinned)
	return sent, refused
}

// signalPinned sends sig to p through its pin or, where the kernel or a
// seccomp profile refuses pidfd_send_signal, by pid while p is not reaped.
func signalPinned(p pinned, sig unix.Signal) error {
	err := unix.PidfdSendSignal(p.fd, sig, nil, 0)
	if (err == unix.ENOSYS || err == unix.EPERM) && alive(p.fd) {
		err = unix.Kill(p.pid, sig)
	}
	return err
}

// Monotonic reads CLOCK_MONOTONIC. (time.Now would link wall-clock time and
// its methods into the binary, some 8 KB.)
func Monotonic() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(ts.Nano())
}

// expired reports whether deadline (see SignalSubtree) has passed.
func expired(deadline time.Duration) bool {
	return deadline != 0 && Monotonic() >= deadline
}

// FindsDescendants reports whether SignalSubtree can find the init's
// descendants when the init is not PID 1: whether /proc shows the init.
func FindsDescendants() bool { return procSelf() != 0 }

// Descendants returns the pids of every process below the init, read from
// /proc. A process that exits while /proc is read may be missing.
func Descendants() []int {
	pinned := pinDescendants(0)
	closeAll(pinned)
	pids := make([]int, len(pinned))
	for i, p := range pinned {
		pids[i] = p.pid
	}
	return pids
}

// pinned is a process held open as /proc/<pid>: while fd is open, fd refers
// to that process, even once it has exited and its pid is reused. pgrp is
// its process group when it was pinned.
type pinned struct{ pid, fd, pgrp int }

// pinDescendants pins every descendant of the init, parents before their
// children, before any is signalled (a parent killed first would hand its
// children to the init before they are found). A process is pinned only if,
// read through its own handle, its parent is a pinned process (or the init)
// that has not been reaped: its pid cannot have been reused. Past deadline
// it returns what it has pinned. The caller closes the handles.
func pinDescendants(deadline time.Duration) []pinned {
	root := procSelf()
	if root == 0 {
		return nil
	}
	children := map[int][]int{}
	for _, pid := range processes() {
		if expired(deadline) {
			return nil
		}
		if ppid, _, ok := parentOf(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/stat"); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var all []pinned
	parent := pinned{root, unix.AT_FDCWD, 0}
	for i := 0; ; i++ {
		if expired(deadline) {
			return all
		}
		for _, pid := range children[parent.pid] {
			fd, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			ppid, pgrp, ok := parentOf(fd, "stat")
			if !ok || ppid != parent.pid || !alive(parent.fd) {
				unix.Close(fd)
				continue
			}
			all = append(all, pinned{pid, fd, pgrp})
		}
		if i == len(all) {
			return all
		}
		parent = all[i]
	}
}

func closeAll(pinned []pinned) {
	for _, p := range pinned {
		unix.Close(p.fd)
	}
}

// alive reports whether the pinned process fd refers to has not been reaped
// (the init itself, for AT_FDCWD, always is).
func alive(fd int) bool {
	if fd == unix.AT_FDCWD {
		return true
	}
	_, _, ok := parentOf(fd, "stat")
	return ok
}

// procSelf returns the init's pid as /proc shows it, or 0.
func procSelf() int {
	buf := make([]byte, 16)
	n, err := unix.Readlink("/proc/self", buf)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(string(buf[:n]))
	return pid
}

// processes lists the pids in /proc.
func processes() []int { return Numbers("/proc") }

// Numbers lists the entries of dir that are numbers: the pids in /proc, the
// descriptors in /proc/self/fd (the one used to read it included, closed by
// then).
func Numbers(dir string) []int {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var numbers []int
	buf := make([]byte, 8*1024)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return numbers
		}
		var names []string
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		for _, name := range names {
			if n, err := strconv.Atoi(name); err == nil {
				numbers = append(numbers, n)
			}
		}
	}
}

// parentOf reads the parent pid and the process group from the stat file
// at path, relative to dirfd.
func parentOf(dirfd int, path string) (ppid, pgrp int, ok bool) {
	fd, err := unix.Openat(dirfd, path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, false
	}
	defer unix.Close(fd)
	buf := make([]byte, 512)
	n, err := unix.Read(fd, buf)
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	return ParseStat(string(buf[:n]))
}

// ParseStat returns the parent pid and process group fields of a
// /proc/<pid>/stat line. The command name may hold spaces and parentheses,
// so fields are counted from the last closing parenthesis:
// "pid (comm) state ppid pgrp ...".
func ParseStat(stat string) (ppid, pgrp int, ok bool) {
	end := -1
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			end = i
			break
		}
	}
	if end < 0 || end+4 > len(stat) {
		return 0, 0, false
	}
	rest := stat[end+4:] // skip ") S "
	var fields [2]int
	for f := range fields {
		i := 0
		for i < len(rest) && rest[i] != ' ' {
			i++
		}
		n, err := strconv.Atoi(rest[:i])
		if err != nil {
			return 0, 0, false
		}
		fields[f] = n
		rest = rest[min(i+1, len(rest)):]
	}
	return fields[0], fields[1], true
}
