package supervisor

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/signals"
)

// kernelSigaction is the kernel's struct sigaction on amd64 and arm64.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

const (
	sigDfl = 0
	sigIgn = 1
)

// ignoredAfterFork lists the signals the init ignores once its program has
// started (see Run).
var ignoredAfterFork = [...]unix.Signal{unix.SIGTTIN, unix.SIGTTOU, 34}

// signalSet has bit N set for signal N.
type signalSet uint64

// setDisposition sets sig's handler to SIG_DFL or SIG_IGN, beside the Go
// runtime, for a signal the init never takes through os/signal.
func setDisposition(sig unix.Signal, handler uintptr) {
	act := kernelSigaction{handler: handler}
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, unsafe.Sizeof(act.mask), 0, 0)
}

// ignored reports whether sig's disposition is SIG_IGN right now.
//
// For SIGHUP, SIGINT, SIGCONT, SIGTSTP, SIGTTIN and SIGTTOU the Go runtime
// keeps an inherited SIG_IGN until the program asks for the signal, so this
// is the disposition the init was started with. For the other signals the
// runtime has already installed its own handler before main runs, so an
// inherited SIG_IGN cannot be seen (see docs/limits.md).
func ignored(sig unix.Signal) bool {
	var old kernelSigaction
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), 0,
		uintptr(unsafe.Pointer(&old)), unsafe.Sizeof(old.mask), 0, 0)
	return errno == 0 && old.handler == sigIgn
}

// early lists the signals the init registers for before the program starts:
// every standard signal (1 to 31) it forwards. Signals that were ignored when
// the init started are left out: they stay ignored, in the init and in the
// program, as with tini.
func early() []os.Signal {
	var sigs []os.Signal
	for sig := unix.Signal(1); sig < firstRealTime; sig++ {
		if signals.Forwardable(sig) && !ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// firstRealTime is the first real-time signal the Go runtime lets programs
// use (32 to 34 are the C libraries').
const firstRealTime = 35

// late lists the real-time signals the init forwards. os/signal.Notify
// hands each signal it registers to a runtime thread and waits for it, tens
// of microseconds a signal; these 30 are registered while the program
// starts rather than before. A real-time signal sent to the init within
// about a millisecond of its start can therefore be lost (see docs/benchmark.md).
func late() []os.Signal {
	var sigs []os.Signal
	for sig := unix.Signal(firstRealTime); sig <= signals.Max; sig++ {
		if !ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}
