// Package supervisor runs the program as the init's child and stays with it:
// it forwards signals, reaps every child, and when the program exits, ends
// the rest of the subtree and reports the program's exit code.
//
// Two goroutines share the work. The main one owns every wait: it blocks in
// waitid(2) until a child has exited and reaps. The other forwards what
// os/signal delivers. A mutex, held while reaping and while signalling, keeps
// a reaped pid from being signalled after the kernel could reuse it.
package supervisor

import (
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/config"
	"github.com/pid1-buildpacks/init/init/internal/logger"
	"github.com/pid1-buildpacks/init/init/internal/program"
	"github.com/pid1-buildpacks/init/init/internal/reaper"
	"github.com/pid1-buildpacks/init/init/internal/signals"
)

// signalBuffer is the capacity of the channel signals arrive on. os/signal
// drops a signal when the channel is full, so it is far larger than any
// burst of signals the init can be sent before it forwards them.
const signalBuffer = 1024

// killRetry is how often the subtree is swept with SIGKILL again while
// processes remain after the grace period, to catch any forked in between.
const killRetry = 100 * time.Millisecond

// Supervisor runs one program and everything it leaves behind.
type Supervisor struct {
	Config config.Config
	Log    logger.Logger

	pid1    bool
	child   int
	signals chan os.Signal

	mu     sync.Mutex // held while reaping and while signalling
	exited bool       // the program has been reaped; guarded by mu
}

// Run starts the program at path with argv and env and returns the exit code
// the init must exit with. It returns only when the program has exited and
// every other child of the init is reaped.
func (s *Supervisor) Run(path string, argv []string, env []string) int {
	s.pid1 = unix.Getpid() == 1
	if !s.pid1 {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			s.Log.Error("unable to become a child subreaper: ", err.Error())
		}
	}

	// Every standard signal is registered before the program starts so that
	// none sent in between is lost: they wait in the channel. The real-time
	// signals are registered while the program starts (see late).
	s.signals = make(chan os.Signal, signalBuffer)
	signal.Notify(s.signals, early()...)

	foreground := inForeground()
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Foreground: foreground, Ctty: 0},
	})
	if err != nil {
		perr := program.ExecError(path, err).(*program.Error)
		s.Log.Error(perr.Error())
		return perr.Code
	}
	s.child = pid
	go s.forwardSignals()
	if s.Log.InfoEnabled() {
		s.Log.Info("started ", path, " as pid ", strconv.Itoa(pid), pidNote(s.pid1, foreground))
	}

	// The init is a background process of the terminal from now on: were it
	// to catch SIGTTOU, every write it made to the terminal would be retried
	// forever. Ignoring them before the program starts would pass SIG_IGN on.
	signal.Ignore(unix.SIGTTIN, unix.SIGTTOU)
	s.release()

	status := s.waitProgram()
	code := reaper.ExitCode(status)
	if s.Log.InfoEnabled() {
		s.Log.Info("program exited: ", describe(status))
	}
	s.endSubtree()
	if slices.Contains(s.Config.SuccessExitCodes, code) {
		s.Log.Info("exit code ", strconv.Itoa(code), " is a success exit code, exiting with 0")
		return 0
	}
	return code
}

// release lets go of what the init inherited for the program: the working
// directory, so it is not kept busy, and every file descriptor above 2.
func (s *Supervisor) release() {
	if err := unix.Chdir("/"); err != nil {
		s.Log.Error("unable to change directory to /: ", err.Error())
	}
	if err := closeInherited(); err != nil {
		s.Log.Error("unable to close inherited file descriptors: ", err.Error())
	}
}

// waitProgram reaps children as they exit until the program is among them,
// and returns its wait status.
func (s *Supervisor) waitProgram() unix.WaitStatus {
	var status unix.WaitStatus
	for {
		waitExited()
		s.mu.Lock()
		reaper.Reap(func(pid int, st unix.WaitStatus) {
			s.logReaped(pid, st)
			if pid == s.child {
				status, s.exited = st, true
			}
		})
		done := s.exited
		s.mu.Unlock()
		if done {
			return status
		}
	}
}

// waitExited blocks until a child has exited, without reaping it, or until
// the init has no children. Blocking in the kernel keeps the init idle: no
// thread wakes up while nothing happens.
func waitExited() {
	var info unix.Siginfo
	for unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
}

// forwardSignals registers the real-time signals, then passes on every
// signal that arrives while the program runs. Signals that arrive during the
// registration wait in the channel. (One goroutine rather than two: each
// costs the init a thread.)
func (s *Supervisor) forwardSignals() {
	signal.Notify(s.signals, late()...)
	for sig := range s.signals {
		s.mu.Lock()
		if !s.exited {
			s.forward(sig.(syscall.Signal))
		} else if s.Log.DebugEnabled() {
			s.Log.Debug("not forwarding ", signals.Name(unix.Signal(sig.(syscall.Signal))), ": the program has exited")
		}
		s.mu.Unlock()
	}
}

// forward passes sig, or the signal it is rewritten to, to the program's
// process group or to the program alone.
func (s *Supervisor) forward(received syscall.Signal) {
	sig := unix.Signal(received)
	if to, ok := s.Config.SignalRewrite[sig]; ok {
		sig = to
	}
	target := -s.child
	if s.Config.SignalTarget == config.TargetChild {
		target = s.child
	}
	err := unix.Kill(target, sig)
	if s.Log.DebugEnabled() {
		msg := "forwarded " + signals.Name(unix.Signal(received))
		if sig != unix.Signal(received) {
			msg += " as " + signals.Name(sig)
		}
		if target < 0 {
			msg += " to process group " + strconv.Itoa(-target)
		} else {
			msg += " to pid " + strconv.Itoa(target)
		}
		if err != nil {
			msg += ": " + err.Error()
		}
		s.Log.Debug(msg)
	}
}

// endSubtree ends what the program left behind. When children remain they
// get SIGTERM and up to the grace period to exit; then the rest get SIGKILL,
// again every killRetry until none is left. It returns when the init has no
// children left.
func (s *Supervisor) endSubtree() {
	s.mu.Lock()
	remaining := reaper.Reap(s.logReaped)
	if remaining {
		// SIGCONT after SIGTERM, as systemd does: a stopped process would
		// otherwise only see the SIGTERM when SIGKILL ends it.
		s.signalSubtree(unix.SIGTERM)
		reaper.SignalSubtree(unix.SIGCONT, s.pid1)
		s.Log.Info("waiting up to ", s.Config.GracePeriod.String(), " for the remaining processes")
	}
	s.mu.Unlock()
	if !remaining {
		return
	}

	done := false // guarded by s.mu
	var kill func()
	kill = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if done {
			return
		}
		s.signalSubtree(unix.SIGKILL)
		time.AfterFunc(killRetry, kill)
	}
	// time.AfterFunc rather than time.NewTimer: a Timer's channel of
	// time.Time would link time formatting and time zones into the binary.
	grace := time.AfterFunc(s.Config.GracePeriod, kill)
	defer grace.Stop()

	for remaining {
		waitExited()
		s.mu.Lock()
		remaining = reaper.Reap(s.logReaped)
		done = !remaining
		s.mu.Unlock()
	}
}

// signalSubtree sends sig to what remains of the init's subtree and says so.
func (s *Supervisor) signalSubtree(sig unix.Signal) {
	n := reaper.SignalSubtree(sig, s.pid1)
	if !s.Log.InfoEnabled() {
		return
	}
	if s.pid1 {
		s.Log.Info("sent ", signals.Name(sig), " to every other process of the PID namespace")
	} else {
		s.Log.Info("sent ", signals.Name(sig), " to the init's ", strconv.Itoa(n), " remaining descendants")
	}
}

func (s *Supervisor) logReaped(pid int, status unix.WaitStatus) {
	if s.Log.DebugEnabled() {
		s.Log.Debug("reaped pid ", strconv.Itoa(pid), ", ", describe(status))
	}
}

// describe says how a process ended: "exit code 3" or "killed by SIGTERM".
func describe(status unix.WaitStatus) string {
	if status.Signaled() {
		return "killed by " + signals.Name(status.Signal())
	}
	return "exit code " + strconv.Itoa(status.ExitStatus())
}

func pidNote(pid1, foreground bool) string {
	note := " (init is a child subreaper)"
	if pid1 {
		note = " (init is PID 1)"
	}
	if foreground {
		note += ", its process group owns the terminal"
	}
	return note
}

// inForeground reports whether standard input is the terminal the init's
// process group is in the foreground of, so the program should take it over.
func inForeground() bool {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// closeInherited closes every descriptor above 2 that the init inherited.
// Those are the ones without close-on-exec (they survived the init's own
// exec); the Go runtime's own descriptors, such as the network poller's,
// are all close-on-exec and stay open.
func closeInherited() error {
	fd, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	var inherited []int
	buf := make([]byte, 4096)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
		var names []string
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		for _, name := range names {
			n, err := strconv.Atoi(name)
			if err != nil || n <= 2 || n == fd {
				continue
			}
			if flags, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
				inherited = append(inherited, n)
			}
		}
	}
	unix.Close(fd)
	for _, n := range inherited {
		unix.Close(n)
	}
	return nil
}
