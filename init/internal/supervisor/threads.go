package supervisor

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The Go runtime aborts the init ("fatal error: newosproc") when it needs a
// new thread and clone(2) fails, as it does at a container's pids limit.
// The init therefore makes, before the program starts, every thread it will
// need (keepThreads), and runs on one P: one goroutine does all the work and
// parks on the runtime's poller while it waits, so the runtime has no reason
// to start another thread. When the pids limit leaves less room than the
// init and its program need, the init runs the program in its own place
// instead: a program without an init is never worse than an init that
// aborts.

// threadRoom is how many more processes or threads the pids limit must
// allow when the init starts: the two spare threads, the program, and two
// for what the program starts at once.
const threadRoom = spareThreads + 3

// keepThreads runs the init on one P (whatever GOMAXPROCS or the node's CPU
// count said) and, when limited (a pids limit or RLIMIT_NPROC), makes sure
// the runtime has spareThreads idle threads to hand work to (see
// makeSpareThreads). The runtime keeps idle threads and reuses them.
func keepThreads(limited bool) {
	if limited {
		makeSpareThreads()
	}
}

// spareThreads is how many idle threads the init keeps. On one P, the
// runtime needs a thread for its goroutine while another is held by a
// system call that blocks (the logger's write to a standard error nobody
// reads), and one more to hand the P to when the init's goroutine is in a
// system call the runtime's monitor finds too long.
const spareThreads = 2

// makeSpareThreads leaves the runtime at least spareThreads idle threads
// beside the one running the init's goroutine and the runtime's monitor
// (sysmon), and checks it on /proc/self/status. spareThreads goroutines
// each block in a read(2); the runtime hands the P on from each, to a thread
// it has or starts, and the main goroutine runs only once every reader is
// in its read. Then the readers are let go, and their threads are idle.
// This starts no thread when the runtime has enough already, and, unlike
// runtime.LockOSThread, no template thread. Without /proc it makes them
// unchecked, three times over: a round after the first finds the idle
// threads the first made.
func makeSpareThreads() {
	for try := 0; try < 3 && threads() < spareThreads+2; try++ {
		var fds [2]int
		if unix.Pipe2(fds[:], unix.O_CLOEXEC) != nil {
			return
		}
		reading := make(chan struct{}, spareThreads)
		done := make(chan struct{}, spareThreads)
		for range spareThreads {
			go func() {
				var b [1]byte
				reading <- struct{}{}
				unix.Read(fds[0], b[:])
				done <- struct{}{}
			}()
		}
		for range spareThreads {
			<-reading
		}
		unix.Write(fds[1], make([]byte, spareThreads))
		for range spareThreads {
			<-done
		}
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
}

// threads returns the init's thread count, or 0 when /proc/self/status
// cannot be read.
func threads() int {
	status := readSmall("/proc/self/status")
	_, rest, found := strings.Cut(status, "\nThreads:\t")
	n, err := strconv.Atoi(firstLine(rest))
	if !found || err != nil {
		return 0
	}
	return n
}

// pidsRoom returns how many more tasks the init's pids cgroup and the
// cgroups above it allow, the least of them, or -1 when none has a limit or
// none can be read (cgroup v1 or v2). The limit may be set above the init's
// own cgroup (a Kubernetes pod's), and in a container that sees the host's
// cgroup paths (Docker on cgroup v1) /sys/fs/cgroup/pids is the container's
// own cgroup: each directory from the init's cgroup up to the hierarchy's
// root that exists is read.
func pidsRoom() int {
	room := -1
	cgroups := readSmall("/proc/self/cgroup")
	for len(cgroups) > 0 {
		line := firstLine(cgroups)
		cgroups = cgroups[min(len(line)+1, len(cgroups)):]
		// "0::/path" (v2) or "N:pids:/path" (v1)
		_, rest, _ := strings.Cut(line, ":")
		controllers, path, _ := strings.Cut(rest, ":")
		root := "/sys/fs/cgroup"
		if controllers == "pids" {
			root = "/sys/fs/cgroup/pids"
		} else if controllers != "" {
			continue
		}
		for {
			if r, ok := roomIn(root + path); ok && (room < 0 || r < room) {
				room = r
			}
			i := strings.LastIndexByte(path, '/')
			if i < 0 || path == "/" {
				break
			}
			path = path[:max(i, 1)]
		}
	}
	return room
}

// roomIn returns how many more tasks the pids cgroup dir allows (0 when a
// lowered limit is already exceeded), and false when it has no limit ("max")
// or no pids controller.
func roomIn(dir string) (int, bool) {
	limit, err := strconv.Atoi(firstLine(readSmall(dir + "/pids.max")))
	if err != nil {
		return 0, false
	}
	current, err := strconv.Atoi(firstLine(readSmall(dir + "/pids.current")))
	if err != nil {
		return 0, false
	}
	return max(0, limit-current), true
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// nprocLimited reports whether RLIMIT_NPROC (ulimit -u) limits the init's
// user: a non-root user, as CNB images run, with a finite limit.
func nprocLimited() bool {
	var lim unix.Rlimit
	return unix.Geteuid() != 0 && unix.Getrlimit(unix.RLIMIT_NPROC, &lim) == nil && lim.Cur != unix.RLIM_INFINITY
}

// readSmall returns the first 4 KiB of a file, or "".
func readSmall(path string) string {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Read(fd, buf)
	if err != nil || n <= 0 {
		return ""
	}
	return string(buf[:n])
}
