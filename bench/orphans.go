package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The orphan benchmark. Each init runs, as PID 1 of a fresh PID namespace, this binary in
// forker mode, which makes one batch of orphans for every byte the harness writes to its
// stdin. For each orphan the forker forks a middle child that forks the orphan and exits at
// once; the forker reaps the middle child itself, so by then the orphan has been reparented
// to PID 1 (checked in /proc). The orphans block reading a shared pipe. When the batch is
// complete the forker closes the pipe: every orphan of the batch exits at once, and the
// forker times how long until the last one of them is gone from the process table
// (kill(pid, 0) fails with ESRCH), which only PID 1's wait can bring about. The reap time
// reported is the sum over the batches: it covers the kernel's exit work for the orphans
// plus the init's reaping, but not the forking, which is the same for every init and would
// hide the init's share. The harness drives the forkers one batch at a time, round-robin,
// so only one works at any moment and machine drift affects every init alike.

// batchResult is what forker mode prints on stdout, one JSON line per batch.
type batchResult struct {
	Orphans    int   `json:"orphans"`
	Reparented int   `json:"reparented"`
	Unreaped   int   `json:"unreaped"`
	DrainNS    int64 `json:"drain_ns"`
	ForkNS     int64 `json:"fork_ns"`
}

// Buffers the forked children write from: globals, so that the child never allocates.
var (
	orphanPID   int32
	releaseByte [1]byte
)

// spawnBlockedOrphan forks a middle child that forks an orphan and exits. The orphan closes
// releaseW and pidW, then blocks reading releaseR until EOF and exits 0. The middle child
// writes the orphan's pid to pidW. The children run only raw system calls: after fork a Go
// process has one thread and must not enter the runtime.
//
//go:nosplit
//go:norace
func spawnBlockedOrphan(releaseR, releaseW, pidW uintptr) (int, syscall.Errno) {
	mid, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 || mid != 0 {
		return int(mid), errno
	}
	orphan, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 3, 0, 0)
	}
	if orphan == 0 {
		syscall.RawSyscall(syscall.SYS_CLOSE, releaseW, 0, 0)
		syscall.RawSyscall(syscall.SYS_CLOSE, pidW, 0, 0)
		for {
			_, _, errno = syscall.RawSyscall(syscall.SYS_READ, releaseR, uintptr(unsafe.Pointer(&releaseByte[0])), 1)
			if errno != syscall.EINTR {
				break
			}
		}
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	}
	orphanPID = int32(orphan)
	syscall.RawSyscall(syscall.SYS_WRITE, pidW, uintptr(unsafe.Pointer(&orphanPID)), 4)
	syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	return 0, 0
}

// drainTimeout bounds the wait for one batch to be reaped, so an init that does not reap
// is reported instead of hanging the benchmark.
const drainTimeout = 20 * time.Second

// forkerMain is forker mode: for each byte read on stdin, one batch of orphans, reported
// as a JSON line on stdout; it exits at EOF.
func forkerMain(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("forker mode expects BATCH, got %q", args)
	}
	batch, err := strconv.Atoi(args[0])
	if err != nil || batch < 1 {
		return fmt.Errorf("forker mode expects a positive integer BATCH, got %q", args[0])
	}
	if os.Getpid() == 1 {
		return fmt.Errorf("forker must run under the init, not as PID 1")
	}
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	out := json.NewEncoder(os.Stdout)
	orphans := make([]int, 0, batch)
	var cmd [1]byte
	for {
		if _, err := io.ReadFull(fdReader(0), cmd[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("unable to read stdin: %w", err)
		}
		// Every orphan is a copy of this process: keep it small and the same for each batch,
		// so forking and the orphans' exits cost the same throughout.
		debug.FreeOSMemory()
		res, err := orphanBatch(orphans[:0], batch)
		if err != nil {
			return err
		}
		if err := out.Encode(res); err != nil {
			return fmt.Errorf("unable to report a batch: %w", err)
		}
	}
}

// orphanBatch makes n blocked orphans of PID 1, releases them at once and times how long
// until none of them is left in the process table.
func orphanBatch(orphans []int, n int) (batchResult, error) {
	res := batchResult{Orphans: n}
	var release, pids [2]int
	if err := unix.Pipe2(release[:], 0); err != nil {
		return res, fmt.Errorf("unable to make the release pipe: %w", err)
	}
	if err := unix.Pipe2(pids[:], 0); err != nil {
		return res, fmt.Errorf("unable to make the pid pipe: %w", err)
	}
	defer func() {
		for _, fd := range []int{release[0], release[1], pids[0], pids[1]} {
			_ = unix.Close(fd)
		}
	}()
	forkStart := time.Now()
	for i := 0; i < n; i++ {
		mid, errno := spawnBlockedOrphan(uintptr(release[0]), uintptr(release[1]), uintptr(pids[1]))
		if errno != 0 {
			return res, fmt.Errorf("unable to fork orphan %d: %w", i, errno)
		}
		var buf [4]byte
		if _, err := io.ReadFull(fdReader(pids[0]), buf[:]); err != nil {
			return res, fmt.Errorf("unable to read the pid of orphan %d: %w", i, err)
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(mid, &ws, 0, nil); err != nil {
			return res, fmt.Errorf("unable to wait for middle child %d: %w", mid, err)
		}
		if !ws.Exited() || ws.ExitStatus() != 0 {
			return res, fmt.Errorf("middle child %d ended with status %#x", mid, uint32(ws))
		}
		orphans = append(orphans, int(int32(binary.LittleEndian.Uint32(buf[:]))))
	}
	res.ForkNS = int64(time.Since(forkStart))
	for _, pid := range orphans {
		ppid, err := parentOf(pid)
		if err != nil {
			return res, err
		}
		if ppid == 1 {
			res.Reparented++
		}
	}

	start := time.Now()
	if err := unix.Close(release[1]); err != nil {
		return res, fmt.Errorf("unable to close the release pipe: %w", err)
	}
	release[1] = -1
	deadline := start.Add(drainTimeout)
	i := 0
	for i < len(orphans) {
		if err := unix.Kill(orphans[i], 0); err == unix.ESRCH {
			i++
			continue
		}
		if time.Now().After(deadline) {
			break
		}
		_ = unix.Nanosleep(&unix.Timespec{Nsec: 20_000}, nil)
	}
	res.DrainNS = int64(time.Since(start))
	for _, pid := range orphans[i:] {
		if unix.Kill(pid, 0) == nil {
			res.Unreaped++
		}
	}
	return res, nil
}

type fdReader int

func (fd fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(fd), p)
		if err == unix.EINTR {
			continue
		}
		if n == 0 && err == nil {
			return 0, io.EOF
		}
		return n, err
	}
}

// parentOf reads the parent pid from /proc/<pid>/stat (field 4, after the parenthesised
// comm) without allocating, so that the forker's memory, which every fork copies, stays
// the same from batch to batch.
func parentOf(pid int) (int, error) {
	var pathBuf [32]byte
	path := strconv.AppendInt(append(pathBuf[:0], "/proc/"...), int64(pid), 10)
	path = append(path, "/stat"...)
	fd, err := unix.Open(string(path), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("unable to open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var buf [512]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		return 0, fmt.Errorf("unable to read %s: %w", path, err)
	}
	data := buf[:n]
	end := bytes.LastIndexByte(data, ')')
	// after ") " come the state, one character, a space, then the parent pid
	if end < 0 || end+4 >= len(data) {
		return 0, fmt.Errorf("unexpected contents of %s: %q", path, data)
	}
	ppid := 0
	for _, c := range data[end+4:] {
		if c == ' ' {
			return ppid, nil
		}
		if c < '0' || c > '9' {
			break
		}
		ppid = ppid*10 + int(c-'0')
	}
	return 0, fmt.Errorf("unexpected contents of %s: %q", path, data)
}

// reapResult is the orphan benchmark's outcome for one init.
type reapResult struct {
	batches sample // drain time of each batch
	fork    time.Duration
	initCPU time.Duration // CPU time the init used over all batches
	orphans int
}

// forker is one init running the forker as PID 1, driven batch by batch.
type forker struct {
	init   *initProgram
	p      *pid1
	stdin  io.WriteCloser
	stdout io.Closer
	lines  *bufio.Scanner
}

// measureReaping runs the forker under every init at once, each as PID 1 of its own
// namespace, but drives them one batch at a time, round-robin with a rotating start, so only
// one forker works at any moment and drift affects every init alike. It checks that every
// orphan was reparented to the init and reaped.
func measureReaping(inits []*initProgram, self string, total, batch int) (map[string]reapResult, error) {
	var forkers []*forker
	defer func() {
		for _, f := range forkers {
			f.p.kill()
			f.stdin.Close()
			f.stdout.Close()
		}
	}()
	for _, in := range inits {
		p, stdinW, stdoutR, err := startPiped(in, self, "__forker", strconv.Itoa(batch))
		if err != nil {
			return nil, err
		}
		lines := bufio.NewScanner(stdoutR)
		forkers = append(forkers, &forker{init: in, p: p, stdin: stdinW, stdout: stdoutR, lines: lines})
	}

	results := map[string]reapResult{}
	for round := 0; round*batch < total; round++ {
		roundStart := time.Now()
		for i := range forkers {
			f := forkers[(i+round)%len(forkers)]
			cpu0, err := cpuTime(f.p.hostPID)
			if err != nil {
				return nil, err
			}
			if _, err := f.stdin.Write([]byte{'g'}); err != nil {
				return nil, fmt.Errorf("unable to start a batch under %s: %w (stderr: %q)", f.init.name, err, f.p.stderr.String())
			}
			if !f.lines.Scan() {
				return nil, fmt.Errorf("the forker under %s stopped: %v (stderr: %q)", f.init.name, f.lines.Err(), f.p.stderr.String())
			}
			var b batchResult
			if err := json.Unmarshal(f.lines.Bytes(), &b); err != nil {
				return nil, fmt.Errorf("unable to read the forker's report under %s: %w (%q)", f.init.name, err, f.lines.Text())
			}
			if b.Unreaped > 0 {
				return nil, fmt.Errorf("%s left %d of %d released orphans unreaped for %s", f.init.name, b.Unreaped, b.Orphans, drainTimeout)
			}
			if b.Reparented != b.Orphans {
				return nil, fmt.Errorf("under %s only %d of %d orphans were reparented to PID 1", f.init.name, b.Reparented, b.Orphans)
			}
			cpu1, err := cpuTime(f.p.hostPID)
			if err != nil {
				return nil, err
			}
			r := results[f.init.name]
			r.initCPU += cpu1 - cpu0
			r.batches = append(r.batches, time.Duration(b.DrainNS))
			r.fork += time.Duration(b.ForkNS)
			r.orphans += b.Orphans
			results[f.init.name] = r
			debugf("reap round %d %s: fork %s, reap %s", round, f.init.name, time.Duration(b.ForkNS).Round(time.Millisecond), time.Duration(b.DrainNS).Round(time.Millisecond))
		}
		debugf("reap round %d took %s", round, time.Since(roundStart).Round(time.Millisecond))
	}
	for _, f := range forkers {
		r := results[f.init.name]
		debugf("reap %s: forking %s, reaping %s", f.init.name, r.fork.Round(time.Millisecond), r.batches.sum().Round(time.Millisecond))
	}
	for _, f := range forkers {
		f.stdin.Close() // EOF: the forker exits, then the init
		if err := f.p.wait(30 * time.Second); err != nil {
			return nil, fmt.Errorf("%s after the forker: %w (stderr: %q)", f.init.name, err, f.p.stderr.String())
		}
	}
	return results, nil
}
