package supervisor

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/signals"
)

// When standard input is a terminal, its foreground group decides who gets
// Ctrl-C and who may read. An init whose group owns the terminal (docker run
// -it, a command typed at a shell) starts the program in a group of its own
// and makes it the foreground group, and when the program has exited (or
// its exec failed) gives the terminal back to its own group, so that what
// runs next (the next command of a shell) finds the terminal as the init
// found it. SIGTTOU is ignored by then, so the init may do this from the
// background. When a job-control shell made the init's group a job of its
// own (init -- prog typed at a prompt), Ctrl-Z stops the program alone: the
// init stops too, so that the shell sees its job stopped, and when the
// shell's fg continues the init, it hands the terminal, which the shell gave
// to the init's group, on to the program's before it forwards SIGCONT.
//
// An init started in the background of an interactive shell (cmd &) does
// not own the terminal: it keeps the program in its own group, so that the
// shell's fg and bg move both, and Ctrl-Z stops both (the init takes
// SIGTSTP's default action). So does an init that a job-control shell runs
// inside a job it does not lead (bash -c 'init -- prog' typed at a prompt):
// the shell watches that job, and Ctrl-Z must stop it, as it would the
// program without the init. When the program stops (reading the terminal
// from the background: SIGTTIN), the init stops too, so that the shell sees
// its job stopped and its fg continues both. The terminal sends SIGINT, SIGQUIT and SIGWINCH
// to both, so the init does not forward those; the others it forwards to the
// program alone, since its group is the init's own.

// terminalOwner reports whether standard input is a terminal (tty) and
// whether the init's process group is its foreground group (own).
func terminalOwner() (tty, own bool) {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil, err == nil && pgrp == unix.Getpgrp()
}

// sentByTerminal reports whether the terminal sends sig to its foreground
// group by itself (Ctrl-C, Ctrl-\, a window size change).
func sentByTerminal(sig unix.Signal) bool {
	return sig == unix.SIGINT || sig == unix.SIGQUIT || sig == unix.SIGWINCH
}

// takeTerminal makes pgrp the foreground group of standard input's terminal.
func takeTerminal(pgrp int) {
	unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, pgrp)
}

// handTerminal passes the terminal on to the program's group when the
// init's group has it (a shell's fg gave it to the init's job).
func (s *Supervisor) handTerminal() {
	if _, own := terminalOwner(); own {
		takeTerminal(s.child)
	}
}

// giveTerminalBack returns the terminal to the init's group when the
// program's group still has it.
func (s *Supervisor) giveTerminalBack() {
	if pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && pgrp == s.child {
		takeTerminal(unix.Getpgrp())
	}
}

// followStop acts on the program stopping on sig. When the init gave the
// program the terminal and nobody above does job control (docker run -it),
// nobody could continue it (without the init, the kernel would not have
// stopped it as PID 1): the init continues it. Otherwise a job-control
// shell watches the init's group: the init makes its own job stopped, so
// that the shell sees it stopped; a program stopped by SIGTTIN or SIGTTOU
// after the shell had already brought the job to the foreground (fg) is
// continued instead, in its own group with the terminal handed on. A
// program that left the init's group for one of its own and read the
// terminal from there is left stopped, as it would be without the init:
// continuing it would only stop it again, over and over.
func (s *Supervisor) followStop(sig unix.Signal) {
	if s.continues {
		if sig == unix.SIGTSTP || sig == unix.SIGTTIN || sig == unix.SIGTTOU {
			unix.Kill(-s.child, unix.SIGCONT)
			s.Log.Info("continued the program, stopped by ", signals.Name(sig), ": nobody above the init does job control")
		}
		return
	}
	if _, own := terminalOwner(); own && (sig == unix.SIGTTIN || sig == unix.SIGTTOU) {
		if s.follows {
			s.handTerminal()
			unix.Kill(-s.child, unix.SIGCONT)
		} else if pgrp, err := unix.Getpgid(s.child); err == nil && pgrp == unix.Getpgrp() {
			unix.Kill(s.child, unix.SIGCONT)
		}
		return
	}
	if sig == unix.SIGTSTP && !s.stillStopped() {
		return // fg continued the program meanwhile
	}
	unix.Kill(unix.Getpid(), unix.SIGSTOP)
}

// stillStopped reports whether the program is stopped now, as /proc says
// (true without /proc). The kernel reports no stop that a SIGCONT has
// undone, so this only narrows the window between the report of a Ctrl-Z
// and the init's SIGSTOP, in which a shell's fg could continue the program:
// the init would then stop alone. (A stop by SIGTTIN or SIGTTOU is followed
// at once, without this read: the read, before each, widened the window in
// which a shell's fg lands, 3 runs in 81.)
func (s *Supervisor) stillStopped() bool {
	stat := readSmall("/proc/" + strconv.Itoa(s.child) + "/stat")
	end := strings.LastIndexByte(stat, ')')
	if end < 0 || end+2 >= len(stat) {
		return true
	}
	return stat[end+2] == 'T'
}

// inShellJob reports whether the init runs in a process group that it does
// not lead and that is not its session's: a job-control shell, the
// session's leader, made the group a job of its own.
func inShellJob() bool {
	sid, err := unix.Getsid(0)
	pgrp := unix.Getpgrp()
	return err == nil && pgrp != unix.Getpid() && pgrp != sid
}

// jobControlAbove reports whether a job-control shell started the init: it
// then leads a process group the shell gave it, in the shell's session.
// When it leads its session (docker run -it makes PID 1 the leader of a
// session of its own) or was started in its parent's group (sh -c, without
// job control), nobody above it can continue a stopped program.
func jobControlAbove() bool {
	self := unix.Getpid()
	sid, err := unix.Getsid(0)
	return err == nil && sid != self && unix.Getpgrp() == self
}
