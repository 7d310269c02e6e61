package reaper

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// SignalSubtree sends sig to every process in the init's subtree and returns
// how many it signalled. As PID 1 of a PID namespace every other process of
// the namespace is in its care, and kill(-1) from PID 1 reaches all of them
// but the init itself. Otherwise the init is a child subreaper and signals
// only its descendants, found by walking parent pids in /proc, so that it
// never signals a process outside its own subtree.
func SignalSubtree(sig unix.Signal, pid1 bool) int {
	if pid1 {
		if unix.Kill(-1, sig) != nil {
			return 0
		}
		return 1
	}
	n := 0
	for _, pid := range Descendants(unix.Getpid()) {
		if unix.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}

// Descendants returns the pids of every process below root, read from
// /proc. A process that exits while /proc is read may be missing.
func Descendants(root int) []int {
	children := map[int][]int{}
	for _, pid := range processes() {
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, child := range children[pid] {
			out = append(out, child)
			queue = append(queue, child)
		}
	}
	return out
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

// parentOf reads the parent pid of pid from /proc/<pid>/stat.
func parentOf(pid int) (int, bool) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
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
