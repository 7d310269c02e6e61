package supervisor

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The Go runtime aborts the init ("fatal error: newosproc") when it needs a
// new thread and clone(2) fails, as it does at a container's pids limit.
// Under a pids limit or a finite RLIMIT_NPROC the init runs on one P and
// starts the threads it keeps (the logger's, os/signal's) and spare ones
// before the program (warmThreads: about 0.7 ms, which is why it is not
// done without a limit); the runtime keeps idle threads and reuses them. When the pids limit leaves less room than the
// init's threads may need, the init runs the program in its own place
// instead: a program without an init is never worse than an init that
// aborts.

// threadRoom is how many more processes or threads the pids limit must
// allow when the init starts: the init's threads and the program.
const threadRoom = 8

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

// spareThreads is how many idle threads warmThreads leaves to the runtime,
// beside the ones held for good (sysmon, os/signal's two, the logger's and
// the runtime's template thread): the main goroutine blocks in waitid on
// one, and Go code (the forwarding goroutine, timers) runs on the other
// meanwhile.
const spareThreads = 2

// warmThreads makes the runtime start spareThreads threads now, before the
// program: for a moment it runs on spareThreads+1 Ps, with a goroutine busy
// on each, then on one for good (a thread per CPU, with GOMAXPROCS=64 or on
// a 64-CPU node, would count against the limit). The runtime keeps idle
// threads and reuses them, so it needs no new one while the program runs.
func warmThreads() {
	runtime.GOMAXPROCS(spareThreads + 1)
	var running atomic.Int32
	var done sync.WaitGroup
	deadline := time.Now().Add(500 * time.Microsecond)
	for range spareThreads {
		done.Add(1)
		go func() {
			defer done.Done()
			running.Add(1)
			for running.Load() < spareThreads && time.Now().Before(deadline) {
			}
		}()
	}
	done.Wait()
	runtime.GOMAXPROCS(1)
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
