package reaper

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// SignalSubtree sends sig to every process of the init's subtree and returns
// how many processes could be signalled and how many refused (EPERM: a
// process of another user).
//
// As PID 1 of a PID namespace every other process of the namespace is in its
// care: kill(-1) reaches all of them but the init itself, including those
// forked meanwhile, and silently skips those the init may not signal, which
// are then counted from /proc.
//
// Otherwise the init is a child subreaper (or could not become one) and
// signals only its descendants, found by walking parent pids in /proc. Each
// one is pinned before it is signalled, so that a process that exits and
// whose pid is reused in between is never signalled in its place: the
// process is opened as /proc/<pid>, its parent is read through that handle
// and must be the pinned parent, still there, and the signal is sent through
// the handle with pidfd_send_signal(2).
func SignalSubtree(sig unix.Signal, pid1 bool) (sent, refused int) {
	count := func(err error) {
		switch err {
		case nil:
			sent++
		case unix.EPERM:
			refused++
		}
	}
	if pid1 {
		unix.Kill(-1, sig)
		if procSelf() != 1 {
			return 0, 0 // /proc shows another PID namespace
		}
		for _, pid := range processes() {
			if pid != 1 {
				count(unix.Kill(pid, 0))
			}
		}
		return sent, refused
	}
	eachDescendant(func(pid, fd int) {
		err := unix.PidfdSendSignal(fd, sig, nil, 0)
		if err == unix.ENOSYS { // Linux before 5.1: the check above is all there is
			err = unix.Kill(pid, sig)
		}
		count(err)
	})
	return sent, refused
}

// Descendants returns the pids of every process below the init, read from
// /proc. A process that exits while /proc is read may be missing.
func Descendants() []int {
	var pids []int
	eachDescendant(func(pid, _ int) { pids = append(pids, pid) })
	return pids
}

// eachDescendant calls visit with the pid and a pinned /proc/<pid> handle of
// every descendant of the init, parents before their children. A process is
// visited only if, read through its own handle, its parent is a process
// already visited (or the init) that has not been reaped since: its pid
// cannot then have been reused.
func eachDescendant(visit func(pid, fd int)) {
	root := procSelf()
	if root == 0 {
		return
	}
	children := map[int][]int{}
	for _, pid := range processes() {
		if ppid, ok := parentOf(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/stat"); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	type pinned struct{ pid, fd int }
	queue := []pinned{{root, unix.AT_FDCWD}}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, pid := range children[parent.pid] {
			fd, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			ppid, ok := parentOf(fd, "stat")
			if !ok || ppid != parent.pid || !alive(parent.fd) {
				unix.Close(fd)
				continue
			}
			visit(pid, fd)
			queue = append(queue, pinned{pid, fd})
		}
		if parent.fd != unix.AT_FDCWD {
			unix.Close(parent.fd)
		}
	}
}

// alive reports whether the pinned process fd refers to has not been reaped
// (the init itself, for AT_FDCWD, always is).
func alive(fd int) bool {
	if fd == unix.AT_FDCWD {
		return true
	}
	_, ok := parentOf(fd, "stat")
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

// processes lists the numeric entries of /proc.
func processes() []int {
	fd, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var pids []int
	buf := make([]byte, 32*1024)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return pids
		}
		var names []string
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		for _, name := range names {
			if pid, err := strconv.Atoi(name); err == nil {
				pids = append(pids, pid)
			}
		}
	}
}

// parentOf reads the parent pid from the stat file at path, relative to
// dirfd.
func parentOf(dirfd int, path string) (int, bool) {
	fd, err := unix.Openat(dirfd, path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	buf := make([]byte, 512)
	n, err := unix.Read(fd, buf)
	if err != nil || n <= 0 {
		return 0, false
	}
	return ParseParent(string(buf[:n]))
}

// ParseParent returns the parent pid field of a /proc/<pid>/stat line. The
// command name may hold spaces and parentheses, so fields are counted from
// the last closing parenthesis: "pid (comm) state ppid ...".
func ParseParent(stat string) (int, bool) {
	end := -1
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			end = i
			break
		}
	}
	if end < 0 || end+4 > len(stat) {
		return 0, false
	}
	rest := stat[end+4:] // skip ") S "
	i := 0
	for i < len(rest) && rest[i] != ' ' {
		i++
	}
	ppid, err := strconv.Atoi(rest[:i])
	if err != nil {
		return 0, false
	}
	return ppid, true
}
