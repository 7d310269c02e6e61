package supervisor

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/signals"
	"github.com/pid1-buildpacks/init/init/internal/trap"
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
var ignoredAfterFork = [...]unix.Signal{unix.SIGTTIN, unix.SIGTTOU}

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

// catchSignals makes every signal the init forwards, and SIGCHLD, arrive
// through trap from now on. Signals that were ignored when the init started
// are left out: they stay ignored, in the init and in the program, as with
// tini. So is SIGTSTP when the program stays in the init's group: the init
// takes its default action and stops with the program (see terminal.go).
func (s *Supervisor) catchSignals() error {
	if err := trap.Open(); err != nil {
		return err
	}
	for sig := unix.Signal(1); sig <= signals.Max; sig++ {
		if sig != unix.SIGCHLD && (!signals.Forwardable(sig) || ignored(sig) || sig == unix.SIGTSTP && s.sameGroup) {
			continue
		}
		if err := trap.Catch(sig); err != nil {
			return err
		}
	}
	return nil
}
