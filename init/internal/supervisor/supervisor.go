// Package supervisor runs the program as the init's child and stays with it:
// it forwards signals, reaps every child, and when the program exits, ends
// the rest of the subtree and reports the program's exit code.
//
// One goroutine does it all, as tini's loop does. Until the program has
// exited it waits for signals (trap: SIGCHLD among them), forwards each and,
// after a SIGCHLD, reaps every child that has exited; then it ends what
// remains and reaps it as it goes (shutdown.go). Since signalling and
// reaping never overlap, a reaped pid, which the kernel may reuse, is never
// signalled.
package supervisor

import (
	"slices"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/config"
	"github.com/pid1-buildpacks/init/init/internal/logger"
	"github.com/pid1-buildpacks/init/init/internal/program"
	"github.com/pid1-buildpacks/init/init/internal/reaper"
	"github.com/pid1-buildpacks/init/init/internal/signals"
	"github.com/pid1-buildpacks/init/init/internal/trap"
)

// Supervisor runs one program and everything it leaves behind.
type Supervisor struct {
	Config config.Config
	Log    logger.Logger

	pid       int
	pid1      bool
	subreaper bool // orphans of the subtree come to the init (always as PID 1)
	// wasSubreaper says whether the init was started a child subreaper
	// (the attribute survives execve).
	wasSubreaper bool
	child        int
	// childFd is a pidfd of the program (-1 if none): through it the
	// program's process group is signalled after the program is reaped,
	// whatever process its pid then names (see signalGroup).
	childFd   int
	sameGroup bool // the program runs in the init's process group (see terminal.go)
	continues bool // the init continues the program when it stops (see terminal.go)
	follows   bool // the init stops when the program stops, and hands it the terminal on fg (see terminal.go)
	// startIgnored says which of the signals the init ignores after the
	// fork were ignored when it started.
	startIgnored signalSet

	infos      [64]unix.Siginfo // signals as they arrive; reused
	pipeFailed bool             // trap.Wait has failed
	reaped     []reapedChild    // for the debug log; reused
}

// Run starts the program at path with argv and env and returns the exit code
// the init must exit with. It returns when the program has exited and the
// rest of the subtree has ended, or, for what could not be ended, when the
// grace period and the kill wait have passed (see endSubtree).
func (s *Supervisor) Run(path string, argv []string, env []string) int {
	s.pid = unix.Getpid()
	s.pid1 = s.pid == 1
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

	tty, foreground := terminalOwner()
	s.sameGroup = tty && (!foreground || inShellJob())
	s.continues = foreground && !s.sameGroup && !jobControlAbove()
	s.follows = foreground && !s.sameGroup && !s.continues
	room := pidsRoom()
	if room >= 0 && room < threadRoom {
		return s.execInPlace(path, argv, env, "the pids limit leaves room for "+strconv.Itoa(room)+" more processes")
	}
	// Every signal is caught before the program starts so that none sent in
	// between is lost: they wait in trap's pipe.
	if err := s.catchSignals(); err != nil {
		return s.execInPlace(path, argv, env, "unable to catch signals: "+err.Error())
	}
	keepThreads(room >= 0 || nprocLimited())
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: !s.sameGroup, Foreground: foreground && !s.sameGroup, Ctty: 0},
	})
	// The init is a background process of the terminal from now on: were it
	// to catch SIGTTOU, every write it made to the terminal would be retried
	// forever. Ignoring them before the program starts would pass SIG_IGN on.
	for _, sig := range ignoredAfterFork {
		setDisposition(sig, sigIgn)
	}
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
	s.childFd, err = unix.PidfdOpen(pid, 0) // not reaped yet: pid is the program
	if err != nil {
		s.childFd = -1
	}
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
	// Written here, not through the logger: the line must be out before
	// execve, and the pids limit may leave no room for a thread to write
	// it from.
	restore := logger.Unstopped()
	logger.Flush(execFlushTimeout)
	unix.Write(2, []byte(logger.Prefix+"warning: unable to start "+path+" as the init's child ("+why+
		"): executing it in the init's place, without an init\n"))
	restore()
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

// waitProgram forwards the signals that arrive and reaps the children that
// exit until the program is among them, and returns its wait status. The
// signals that arrive with its exit are forwarded before it is reaped.
func (s *Supervisor) waitProgram() unix.WaitStatus {
	options := 0
	if s.sameGroup || s.continues || s.follows {
		options = unix.WUNTRACED
	}
	for {
		n, err := trap.Wait(s.infos[:])
		children := false
		if err != nil {
			// The pipe does not fail while the init holds it. Were it to,
			// the init would go on reaping, every pollMax, without signals.
			if !s.pipeFailed {
				s.pipeFailed = true
				s.Log.Error("unable to read signals, no longer forwarding them: ", err.Error())
			}
			time.Sleep(pollMax)
			children = true
		}
		for i := range s.infos[:n] {
			info := &s.infos[i]
			if info.Signo == int32(unix.SIGCHLD) {
				children = true
				continue
			}
			s.forwardSignal(info)
		}
		if !children {
			continue
		}
		trap.Reaped()
		if status, exited, _ := s.reapExited(options); exited {
			return status
		}
	}
}

// reapExited reaps, without waiting, every child that has exited, the
// program's wait status among them when exited, and reports whether children
// remain. With unix.WUNTRACED, when the program stops, the init stops with it
// or continues it (see terminal.go). It allocates nothing unless the debug
// log is on.
func (s *Supervisor) reapExited(options int) (status unix.WaitStatus, exited, remaining bool) {
	debug := s.Log.DebugEnabled()
	var stopped unix.Signal
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
			status, exited = st, true
		}
	}
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

// forwardSignal passes on a signal that arrived while the program runs,
// unless the terminal sent it to the program too or the init raised it
// itself: the kernel sends a thread that writes to a pipe nobody reads
// SIGPIPE, and one that writes past RLIMIT_FSIZE SIGXFSZ, as from the
// thread's own process (the logger's writes).
func (s *Supervisor) forwardSignal(info *unix.Siginfo) {
	received := unix.Signal(info.Signo)
	if info.Code == siUser && trap.Sender(info) == s.pid {
		s.Log.Debug("not forwarding ", signals.Name(received), ": the init raised it itself")
		return
	}
	if s.sameGroup && sentByTerminal(received) {
		s.Log.Debug("not forwarding ", signals.Name(received), ": the terminal sent it to the program too")
		return
	}
	if received == unix.SIGCONT && s.follows {
		s.handTerminal()
	}
	sent, target, err := s.forward(received, info)
	if s.Log.DebugEnabled() {
		s.Log.Debug(describeForward(received, sent, target, err))
	}
}

// forward passes sig, or the signal it is rewritten to, to the program's
// process group (target < 0) or to the program alone. A signal sent with a
// value (sigqueue) goes to the program alone, as it came: code, sender and
// value; a process group can only be sent a plain signal.
func (s *Supervisor) forward(received unix.Signal, info *unix.Siginfo) (sent unix.Signal, target int, err error) {
	sent = received
	if to, ok := s.Config.SignalRewrite[received]; ok {
		sent = to
	}
	if trap.Queued(info) {
		return sent, s.child, trap.Queue(s.child, sent, info)
	}
	target = -s.child
	if s.Config.SignalTarget == config.TargetChild || s.sameGroup {
		target = s.child
	}
	return sent, target, unix.Kill(target, sent)
}

// siUser is the code of a signal sent with kill(2), or raised by the kernel
// for a process's own write.
const siUser = 0

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
