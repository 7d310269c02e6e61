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

// pidsRoom returns how many more tasks the init's pids cgroup allows, or -1
// when there is no limit or it cannot be read (cgroup v1 or v2).
func pidsRoom() int {
	cgroups := readSmall("/proc/self/cgroup")
	for len(cgroups) > 0 {
		line := firstLine(cgroups)
		cgroups = cgroups[min(len(line)+1, len(cgroups)):]
		// "0::/path" (v2) or "N:pids:/path" (v1)
		_, rest, _ := strings.Cut(line, ":")
		controllers, path, _ := strings.Cut(rest, ":")
		dir := "/sys/fs/cgroup" + path
		if controllers == "pids" {
			dir = "/sys/fs/cgroup/pids" + path
		} else if controllers != "" {
			continue
		}
		max, err := strconv.Atoi(firstLine(readSmall(dir + "/pids.max")))
		if err != nil {
			continue // "max", or no pids controller there
		}
		current, err := strconv.Atoi(firstLine(readSmall(dir + "/pids.current")))
		if err != nil {
			continue
		}
		return max - current
	}
	return -1
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
