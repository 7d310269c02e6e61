// Package trap takes signals beside the Go runtime, the way sigtimedwait(2)
// would in a C init: every instance of every caught signal, with its
// siginfo, in the order the kernel delivers them.
//
// os/signal cannot: it keeps one pending bit per signal (queued real-time
// signals are merged), drops the siginfo (a sigqueue(3) value), and leaves
// SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP and SIGSYS to the runtime, which
// takes any such signal whose code is not SI_USER or SI_TKILL for a fault of
// its own and aborts. Blocking the signals and waiting for them is not
// possible either: the runtime unblocks them in every thread it starts.
//
// Catch installs, in place of the runtime's handler, a handler written in
// assembly (handler_*.s) that runs on the thread's signal stack and makes
// one system call: it writes the 128-byte siginfo to a non-blocking pipe.
// Wait reads them back. A fault signal the kernel raised (a positive code)
// still goes to the runtime's handler, so that a real fault in the init is
// reported as before. SIGCHLD instances are folded into one until Reaped is
// called: they only say that children have changed state.
package trap

import (
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pipeSize is the capacity of the pipe asked for: 8,192 signals. Beyond it,
// while the init does not read, the handler (which cannot block) only counts
// the instances of each signal that found no room, and Wait delivers them
// after the ones in the pipe, without their siginfo (see lost). 1 MiB is what
// /proc/sys/fs/pipe-max-size allows an unprivileged process by default; the
// pages are only taken as signals wait in it.
const pipeSize = 1 << 20

// infoSize is the size of a siginfo on Linux.
const infoSize = int(unsafe.Sizeof(unix.Siginfo{}))

// Set by Open and Catch, read by the handler.
var (
	writeFd      int32            // the pipe's write end
	chained      uint64           // bit N: signal N's kernel-raised instances go to previous[N]
	previous     [65]uintptr      // the runtime's handlers
	childPending uint32           // a SIGCHLD is in the pipe, not yet taken by Reaped
	signals      syscall.RawConn  // the pipe's read end, on the runtime's poller
	template     *kernelSigaction // the runtime's flags, restorer and mask

	// lost[N] counts the instances of signal N the pipe had no room for;
	// lostAny is set after each such count. The handler then writes wake (a
	// siginfo of signal 0, which Wait skips) so that a reader that had
	// emptied the pipe in between wakes up and takes the count; if the pipe
	// is still full, the reader has a read to make after the count, and
	// takes it then.
	lost    [65]uint32
	lostAny uint32
	wake    [128]byte
	owed    [65]uint32 // counts taken from lost that did not fit in a Wait (the reader's own)
)

// handler is the signal handler (handler_*.s). It is never called from Go.
func handler()

// handlerAddr returns handler's address, for sigaction.
func handlerAddr() uintptr

// faults are the signals the kernel raises for a fault of the thread itself.
const faults = 1<<unix.SIGSEGV | 1<<unix.SIGBUS | 1<<unix.SIGFPE | 1<<unix.SIGILL | 1<<unix.SIGTRAP | 1<<unix.SIGSYS

// kernelSigaction is the kernel's struct sigaction on amd64 and arm64.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// Open makes the pipe the handler writes to. It must be called before
// Catch.
func Open() error {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return err
	}
	unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, pipeSize) // the default 64 KiB otherwise
	writeFd = int32(fds[1])
	conn, err := os.NewFile(uintptr(fds[0]), "signals").SyscallConn()
	if err != nil {
		return err
	}
	signals = conn
	var usr1 kernelSigaction
	if err := sigaction(unix.SIGUSR1, nil, &usr1); err != nil {
		return err
	}
	template = &usr1 // the runtime handles SIGUSR1 with its own flags
	return nil
}

// Catch makes sig arrive through Wait from now on. The child of a fork gets
// the default action at its execve, as for any caught signal.
func Catch(sig unix.Signal) error {
	var old kernelSigaction
	if err := sigaction(sig, nil, &old); err != nil {
		return err
	}
	act := *template
	if old.handler != sigDfl && old.handler != sigIgn {
		act = old
		if faults&(1<<sig) != 0 {
			previous[sig] = old.handler
			chained |= 1 << sig
		}
	}
	act.handler = handlerAddr()
	return sigaction(sig, &act, nil)
}

const (
	sigDfl = 0
	sigIgn = 1
)

// sigaction is rt_sigaction(2).
func sigaction(sig unix.Signal, act, old *kernelSigaction) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(act)),
		uintptr(unsafe.Pointer(old)), unsafe.Sizeof(act.mask), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// Wait blocks until signals have arrived and fills infos with as many as
// it holds, in the order they arrived. It parks the goroutine on the
// runtime's poller, so no thread waits for it, and reads with a raw system
// call: a read through package syscall would wake the runtime's sysmon
// thread each time, three context switches a signal.
//
// An instance the pipe had no room for comes after the signals that were in
// it, with its number only (code SI_USER, no sender or value), so that it
// is passed on with kill(2); a SIGCHLD among them still says that children
// have changed state. Wait may return 0 signals.
func Wait(infos []unix.Siginfo) (int, error) {
	if n := takeOwed(infos); n > 0 {
		return n, nil
	}
	pending = unsafe.Slice((*byte)(unsafe.Pointer(&infos[0])), len(infos)*infoSize)
	if err := signals.Read(readPipe); err != nil {
		return 0, err
	}
	n := 0
	for i := range infos[:got/infoSize] {
		if infos[i].Signo != 0 { // not a wake
			infos[n] = infos[i]
			n++
		}
	}
	if atomic.SwapUint32(&lostAny, 0) != 0 {
		for sig := range lost {
			if atomic.LoadUint32(&lost[sig]) != 0 {
				owed[sig] += atomic.SwapUint32(&lost[sig], 0)
			}
		}
	}
	return n + takeOwed(infos[n:]), readErr
}

// takeOwed fills infos with lost instances taken from owed, and returns how
// many.
func takeOwed(infos []unix.Siginfo) int {
	n := 0
	for sig := range owed {
		for owed[sig] > 0 && n < len(infos) {
			infos[n] = unix.Siginfo{Signo: int32(sig)}
			owed[sig]--
			n++
		}
	}
	return n
}

// The state of a Wait, for readPipe: one function value, made once, so that
// a Wait allocates nothing.
var (
	pending  []byte
	got      int
	readErr  error
	readPipe = func(fd uintptr) bool {
		n, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&pending[0])), uintptr(len(pending)))
		switch errno {
		case unix.EAGAIN:
			return false // nothing yet: wait for the poller
		case unix.EINTR:
			return false
		case 0:
			got, readErr = int(n), nil
		default:
			got, readErr = 0, errno
		}
		return true
	}
)

// Reaped says that the children were reaped after a SIGCHLD came through
// Wait: the next SIGCHLD comes through again.
func Reaped() {
	atomic.StoreUint32(&childPending, 0)
}

// Queue sends info, as signal sig, to the process pid with rt_sigqueueinfo(2):
// its code, sender and value unchanged. The kernel allows it for the codes a
// process may send (those below 0 but SI_TKILL).
func Queue(pid int, sig unix.Signal, info *unix.Siginfo) error {
	copied := *info
	copied.Signo = int32(sig)
	_, _, errno := unix.RawSyscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&copied)))
	if errno != 0 {
		return errno
	}
	return nil
}

// Queued reports whether info is for a signal sent with a value (sigqueue,
// a timer, a message queue): Queue can pass it on as it came.
func Queued(info *unix.Siginfo) bool {
	return info.Code < 0 && info.Code != siTkill
}

// Sender returns the pid of the process that sent info's signal, as the
// receiver's PID namespace sees it (0 for a sender outside it), for the
// codes that carry one (SI_USER, the sigqueue codes, SIGCHLD's).
func Sender(info *unix.Siginfo) int {
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), 16)))
}

// siTkill is the code of a signal sent with tkill(2) or tgkill(2).
const siTkill = -6
