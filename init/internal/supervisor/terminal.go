package supervisor

import "golang.org/x/sys/unix"

// The program runs in a process group of its own. When standard input is a
// terminal, the terminal's foreground group decides who gets Ctrl-C and who
// may read: the init hands the terminal to the program's group when its own
// group has it, at the start and whenever it gets it back (a shell's fg),
// and gives it back to its own group when the program has exited, so that
// what runs after the init (the next command of a shell) finds the terminal
// as the init found it. SIGTTOU is ignored by then, so the init may do this
// from the background.

// inForeground reports whether standard input is the terminal the init's
// process group is in the foreground of, so the program should take it over.
func inForeground() bool {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// takeTerminal makes pgrp the foreground group of standard input's terminal.
func takeTerminal(pgrp int) {
	unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, pgrp)
}

// followForeground hands the terminal to the program's group when the init's
// own group has just been given it: a shell that brings the init to the
// foreground (fg) gives the terminal to the init's group and sends it
// SIGCONT, which the init forwards. Called with s.mu held, before the
// program is reaped.
func (s *Supervisor) followForeground() {
	if inForeground() {
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
