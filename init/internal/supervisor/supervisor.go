// Package supervisor runs the program as the init's child and stays with it:
// it forwards signals, reaps every child, and when the program exits, ends
// the rest of the subtree and reports the program's exit code.
//
// Goroutines share the work. The main one starts the program and owns every
// wait: until the program has exited it blocks in waitid(2) until a child
// has exited and reaps; then it ends what remains and reaps it as it goes
// (shutdown.go). Another forwards what os/signal delivers. A mutex, held
// while reaping and while signalling, keeps a reaped pid from being
// signalled after the kernel could reuse it; nothing is logged while it is
// held.
package supervisor

import (
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

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

// Supervisor runs one program and everything it leaves behind.
type Supervisor struct {
	Config config.Config
	Log    logger.Logger

	pid1      bool
	subreaper bool // orphans of the subtree come to the init (always as PID 1)
	// wasSubreaper says whether the init was started a child subreaper
	// (the attribute survives execve).
	wasSubreaper bool
	child        int
	sameGroup    bool // the program runs in the init's process group (see terminal.go)
	continues    bool // the init continues the program when it stops (see terminal.go)
	// startIgnored says which of the signals the init ignores after the
	// fork were ignored when it started.
	startIgnored signalSet
	signals      chan os.Signal

	mu     sync.Mutex    // held while reaping and while signalling
	exited bool          // the program has been reaped; guarded by mu
	reaped []reapedChild // for the debug log; reused
}

// Run starts the program at path with argv and env and returns the exit code
// the init must exit with. It returns when the program has exited and the
// rest of the subtree has ended, or, for what could not be ended, when the
// grace period and the kill wait have passed (see endSubtree).
func (s *Supervisor) Run(path string, argv []string, env []string) int {
	s.pid1 = unix.Getpid() == 1
	s.subreaper = s.pid1
	var subreaperErr error
	if !s.pid1 {
		var was int32
		unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&was)), 0, 0, 0)
		s.wasSubreaper = was != 0
		subreaperErr = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		s.subreaper = subreaperErr == nil
	}
	for _, sig := range ignoredAfterFork {
		if ignored(sig) {
			s.startIgnored |= 1 << sig
		}
	}

	// Every standard signal is registered before the program starts so that
	// none sent in between is lost: they wait in the channel. The real-time
	// signals are registered while the program starts (see late).
	s.signals = make(chan os.Signal, signalBuffer)
	signal.Notify(s.signals, early()...)

	tty, foreground := terminalOwner()
	s.sameGroup = tty && !foreground
	s.continues = foreground && !jobControlAbove()
	room := pidsRoom()
	if room >= 0 && room < threadRoom {
		return s.execInPlace(path, argv, env, "the pids limit leaves room for "+strconv.Itoa(room)+" more processes")
	}
	if room >= 0 || nprocLimited() {
		logger.Start()
		warmThreads()
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: !s.sameGroup, Foreground: foreground, Ctty: 0},
	})
	// The init is a background process of the terminal from now on: were it
	// to catch SIGTTOU, every write it made to the terminal would be retried
	// forever. Ignoring them before the program starts would pass SIG_IGN on.
	signal.Ignore(unix.SIGTTIN, unix.SIGTTOU)
	if s.sameGroup {
		signal.Reset(unix.SIGTSTP) // see terminal.go
	}
	// Without a handler for SIGCHLD the kernel does not interrupt a thread
	// for each child that exits; waitid is woken all the same. 34 (glibc's
	// SIGRTMIN) has no handler in the Go runtime either, and would kill the
	// init when it is not PID 1 (see the README).
	setDisposition(unix.SIGCHLD, sigDfl)
	setDisposition(34, sigIgn)
	if err == unix.EAGAIN {
		return s.execInPlace(path, argv, env, "fork: "+err.Error())
	}
	if err != nil {
		if foreground {
			takeTerminal(unix.Getpgrp()) // the child took it before its exec failed
		}
		perr := program.ExecError(path, err).(*program.Error)
		s.Log.Error(perr.Error())
		return perr.Code
	}
	s.child = pid
	go s.forwardSignals()
	if subreaperErr != nil {
		s.Log.Error("warning: not a child subreaper (", subreaperErr.Error(), "): orphans of the program's ",
			"subtree go to the reaper above the init, which at exit ends only the program's group ",
			"and the descendants it can find")
	}
	if s.Log.InfoEnabled() {
		s.Log.Info("started ", path, " as pid ", strconv.Itoa(pid), s.role(foreground))
	}
	s.release()

	status := s.waitProgram()
	s.giveTerminalBack()
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

// execInPlace execs the program in the init's own place when the init
// cannot fork it (the pids limit is reached): without an init the program
// would run, so it runs, without one. It returns only when execve fails.
func (s *Supervisor) execInPlace(path string, argv, env []string, why string) int {
	// Written here, not through the logger: its thread may not be there,
	// and there may be no room to make it.
	logger.Flush(execFlushTimeout)
	unix.Write(2, []byte(logger.Prefix+"warning: unable to start "+path+" as the init's child ("+why+
		"): executing it in the init's place, without an init\n"))
	for _, sig := range ignoredAfterFork {
		if s.startIgnored&(1<<sig) == 0 {
			setDisposition(sig, sigDfl)
		}
	}
	if s.subreaper && !s.pid1 && !s.wasSubreaper {
		// The attribute survives execve: the program would get the orphans
		// of its subtree, and leave them zombies.
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	}
	err := unix.Exec(path, argv, env)
	perr := program.ExecError(path, err).(*program.Error)
	s.Log.Error(perr.Error())
	return perr.Code
}

// execFlushTimeout bounds the wait for that warning to be written.
const execFlushTimeout = 200 * time.Millisecond

// release lets go of what the init inherited for the program: the working
// directory, so it is not kept busy, and every file descriptor above 2.
func (s *Supervisor) release() {
	if err := unix.Chdir("/"); err != nil {
		s.Log.Error("unable to change directory to /: ", err.Error())
	}
	closeInherited()
}

// waitProgram reaps children as they exit until the program is among them,
// and returns its wait status.
func (s *Supervisor) waitProgram() unix.WaitStatus {
	for {
		if status, exited, _ := s.reap(); exited {
			return status
		}
	}
}

// reap waits until a child exits and reaps every child that has (see
// reapExited).
func (s *Supervisor) reap() (status unix.WaitStatus, exited, remaining bool) {
	options := 0
	if s.sameGroup || s.continues {
		options = unix.WUNTRACED
	}
	waitChild(options)
	return s.reapExited(options)
}

// reapExited reaps, without waiting, every child that has exited, the
// program's wait status among them when exited, and reports whether children
// remain. With unix.WUNTRACED, when the program stops, the init stops with it
// or continues it (see terminal.go). It allocates nothing unless the debug
// log is on.
func (s *Supervisor) reapExited(options int) (status unix.WaitStatus, exited, remaining bool) {
	debug := s.Log.DebugEnabled()
	var stopped unix.Signal
	s.mu.Lock()
	for {
		pid, st := reaper.Next(options)
		if pid <= 0 {
			remaining = pid == 0
			break
		}
		if st.Stopped() {
			if pid == s.child {
				stopped = st.StopSignal()
			}
			continue
		}
		if debug {
			s.reaped = append(s.reaped, reapedChild{pid, st})
		}
		if pid == s.child {
			status, exited, s.exited = st, true, true
		}
	}
	s.mu.Unlock()
	if stopped != 0 {
		s.followStop(stopped)
	}
	if debug {
		for _, r := range s.reaped {
			s.Log.Debug("reaped pid ", strconv.Itoa(r.pid), ", ", describe(r.status))
		}
		s.reaped = s.reaped[:0]
	}
	return status, exited, remaining
}

// reapedChild is a reaped child, kept for the debug log.
type reapedChild struct {
	pid    int
	status unix.WaitStatus
}

// waitChild blocks until a child has exited (or, with unix.WUNTRACED,
// stopped), without reaping it, or until the init has no children. Blocking
// in the kernel keeps the init idle: no thread wakes up while nothing
// happens.
func waitChild(options int) {
	if options&unix.WUNTRACED != 0 {
		options = unix.WSTOPPED
	}
	for unix.Waitid(unix.P_ALL, 0, &waitInfo, unix.WEXITED|unix.WNOWAIT|options, nil) == unix.EINTR {
	}
}

// waitInfo receives waitChild's siginfo, which the init does not need: a
// global, so that a wait allocates nothing.
var waitInfo unix.Siginfo

// forwardSignals registers the real-time signals, then passes on every
// signal that arrives while the program runs. Signals that arrive during the
// registration wait in the channel. (One goroutine rather than two: each
// costs the init a thread.)
func (s *Supervisor) forwardSignals() {
	signal.Notify(s.signals, late()...)
	for sig := range s.signals {
		received := unix.Signal(sig.(syscall.Signal))
		s.mu.Lock()
		exited := s.exited
		var sent unix.Signal
		var target int
		var err error
		skip := s.sameGroup && sentByTerminal(received)
		if !exited && !skip {
			sent, target, err = s.forward(received)
		}
		s.mu.Unlock()
		if !s.Log.DebugEnabled() {
			continue
		}
		if exited {
			s.Log.Debug("not forwarding ", signals.Name(received), ": the program has exited")
		} else if skip {
			s.Log.Debug("not forwarding ", signals.Name(received), ": the terminal sent it to the program too")
		} else {
			s.Log.Debug(describeForward(received, sent, target, err))
		}
	}
}

// forward passes sig, or the signal it is rewritten to, to the program's
// process group (target < 0) or to the program alone.
func (s *Supervisor) forward(received unix.Signal) (sent unix.Signal, target int, err error) {
	sent = received
	if to, ok := s.Config.SignalRewrite[received]; ok {
		sent = to
	}
	target = -s.child
	if s.Config.SignalTarget == config.TargetChild || s.sameGroup {
		target = s.child
	}
	return sent, target, unix.Kill(target, sent)
}

// describeForward says what forward did: "forwarded SIGUSR1 as SIGUSR2 to
// process group 7".
func describeForward(received, sent unix.Signal, target int, err error) string {
	msg := "forwarded " + signals.Name(received)
	if sent != received {
		msg += " as " + signals.Name(sent)
	}
	if target < 0 {
		msg += " to process group " + strconv.Itoa(-target)
	} else {
		msg += " to pid " + strconv.Itoa(target)
	}
	if err != nil {
		msg += ": " + err.Error()
	}
	return msg
}

// describe says how a process ended: "exit code 3" or "killed by SIGTERM".
func describe(status unix.WaitStatus) string {
	if status.Signaled() {
		return "killed by " + signals.Name(status.Signal())
	}
	return "exit code " + strconv.Itoa(status.ExitStatus())
}

// role says what the init is, for the "started" line.
func (s *Supervisor) role(foreground bool) string {
	note := " (init is PID 1)"
	if !s.pid1 && s.subreaper {
		note = " (init is a child subreaper)"
	} else if !s.pid1 {
		note = " (init is neither PID 1 nor a child subreaper)"
	}
	if foreground {
		note += ", its process group owns the terminal"
	}
	return note
}

// closeInherited closes every descriptor above 2 that the init inherited.
// Those are the ones without close-on-exec (they survived the init's own
// exec); the Go runtime's own descriptors, such as the network poller's,
// are all close-on-exec and stay open.
func closeInherited() {
	for _, fd := range reaper.Numbers("/proc/self/fd") {
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); fd > 2 && err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}
