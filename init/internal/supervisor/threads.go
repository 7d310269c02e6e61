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
// The init runs on one P (see main.go) and starts the threads it keeps
// (the logger's, os/signal's) before the program, but the runtime may make
// a few more. When the pids limit leaves less room than that, the init
// runs the program in its own place instead: a program without an init is
// never worse than an init that aborts.

// threadRoom is how many more processes or threads the pids limit must
// allow when the init starts: the init's threads and the program.
const threadRoom = 8

// pidsRoom returns how many more tasks the init's pids cgroup allows, or -1
// when there is no limit or it cannot be read (cgroup v1 or v2).
func pidsRoom() int {
	cgroups := readSmall("/proc/self/cgroup")
	for _, line := range strings.Split(cgroups, "\n") {
		var dir string
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			dir = "/sys/fs/cgroup" + rest
		} else if i := strings.Index(line, ":pids:"); i >= 0 {
			dir = "/sys/fs/cgroup/pids" + line[i+len(":pids:"):]
		} else {
			continue
		}
		max, err := strconv.Atoi(strings.TrimSpace(readSmall(dir + "/pids.max")))
		if err != nil {
			continue // "max", or no pids controller there
		}
		current, err := strconv.Atoi(strings.TrimSpace(readSmall(dir + "/pids.current")))
		if err != nil {
			continue
		}
		return max - current
	}
	return -1
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

// spareThreads is how many idle threads warmThreads leaves to the runtime,
// beside the ones held for good (sysmon, os/signal's two, the logger's and
// the runtime's template thread): the main goroutine blocks in waitid on
// one, and Go code (the forwarding goroutine, timers) runs on the other
// meanwhile.
const spareThreads = 2

// warmThreads makes the runtime start spareThreads threads now, before the
// program: for a moment it runs on spareThreads+1 Ps, with a goroutine
// busy on each, then on one again. The runtime keeps idle threads and
// reuses them, so it needs no new one while the program runs.
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
