package supervisor

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/reaper"
	"github.com/pid1-buildpacks/init/init/internal/signals"
)

// killWait is how long, after the grace period, the init waits for the
// processes that remain after SIGKILL to be gone before it exits and leaves what is still there: to the
// kernel, which kills every process of a PID namespace when its PID 1 exits,
// or, as a subreaper, to the reaper above the init. Processes of another user
// (EPERM) and processes that do not die of SIGKILL (stuck in the kernel)
// remain. Both count from the program's exit (however long the sweeps take
// under load): with the logger's flush (see main) the init exits at the
// latest the grace period plus 1.5 s after the program has exited.
const killWait = time.Second

// recheck is how often, during the grace period, the init checks whether all
// that remains is processes it may not signal.
const recheck = 100 * time.Millisecond

// pollMax is the longest the init sleeps, while it waits, between two rounds
// of reaping what has exited (and, after SIGKILL, of sweeping the subtree
// with SIGKILL again, to catch what was forked in between). The first sleeps
// are shorter, from 1 ms doubling, so that a subtree that ends at once is not
// kept waiting.
const pollMax = 20 * time.Millisecond

// endSubtree ends what the program left behind: the processes that remain
// get SIGTERM and SIGCONT and up to the grace period to exit, then SIGKILL
// and up to killWait. It returns when nothing remains or when that time has
// passed, and then says, once, what remains and why. As soon as all that
// remains is processes the init may not signal, it returns too. With no
// grace period, SIGKILL comes at once.
//
// It runs in the main goroutine, which reaps meanwhile: no goroutine, timer
// callback or thread is added, so that it also ends a fork bomb that keeps
// the pids limit reached, where the Go runtime could not start a thread.
func (s *Supervisor) endSubtree() {
	graceEnd := monotonic() + s.Config.GracePeriod
	if s.gone() {
		return
	}
	if s.Config.GracePeriod > 0 && !s.terminate(graceEnd) {
		return
	}
	_, refused := s.signalSubtree(unix.SIGKILL, 0, graceEnd+killWait, true)
	if s.settle(graceEnd+killWait, unix.SIGKILL, s.unreachable(refused, graceEnd+killWait)) {
		return
	}
	s.reportLeftovers()
}

// terminate sends SIGTERM and SIGCONT and waits until graceEnd, and reports
// whether SIGKILL has to follow; when it does not, it has said why.
func (s *Supervisor) terminate(graceEnd time.Duration) bool {
	// SIGCONT after SIGTERM, as systemd does: a stopped process would
	// otherwise only see the SIGTERM when SIGKILL ends it.
	sent, refused := s.signalSubtree(unix.SIGTERM, unix.SIGCONT, graceEnd, true)
	unreachable := s.unreachable(refused, graceEnd)
	if unreachable != nil && sent == 0 {
		s.reportLeftovers()
		return false
	}
	s.Log.Info("waiting up to ", duration(s.Config.GracePeriod), " for the remaining processes")
	if s.settle(graceEnd, 0, unreachable) {
		return false
	}
	if unreachable != nil && unreachable() {
		s.reportLeftovers()
		return false
	}
	return true
}

// unreachable returns, when some processes refused a signal (refused) and
// the init is a subreaper, a check of whether all that remains of the
// subtree, as far as it is found by deadline, is processes the init may not
// signal; otherwise nil. Processes of another user were not told to stop:
// waiting for them would only delay the exit that ends them, as the
// program's exit would have without the init.
func (s *Supervisor) unreachable(refused int, deadline time.Duration) func() bool {
	if refused > 0 && s.subreaper {
		return func() bool {
			sent, refused := reaper.SignalSubtree(0, 0, 0, s.pid1, true, deadline)
			return sent == 0 && refused > 0
		}
	}
	return nil
}

// gone reaps what has exited and reports whether nothing of the subtree
// remains: the init has no child left and, when it is no subreaper, the
// program's process group is empty (its orphans are no longer the init's
// children).
func (s *Supervisor) gone() bool {
	if _, _, remaining := s.reapExited(0); remaining {
		return false
	}
	return s.subreaper || unix.Kill(-s.child, 0) == unix.ESRCH
}

// settle waits until deadline (see monotonic) for the subtree to be gone
// and reports whether it is,
// reaping as it goes. Between two rounds it sleeps (see pollMax); each round
// sends the signal sweep (unless 0) to the subtree again and, every recheck,
// calls unreachable: when that is true, settle stops waiting and reports
// false.
func (s *Supervisor) settle(deadline time.Duration, sweep unix.Signal, unreachable func() bool) bool {
	checked := monotonic()
	pause := time.Millisecond
	for {
		if s.gone() {
			return true
		}
		now := monotonic()
		left := deadline - now
		if left <= 0 {
			return false
		}
		if unreachable != nil && now-checked >= recheck {
			if unreachable() {
				return false
			}
			checked = now
		}
		if sweep != 0 {
			s.sweep(sweep, deadline)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, pollMax)
	}
}

// monotonic reads CLOCK_MONOTONIC.
func monotonic() time.Duration { return reaper.Monotonic() }

// duration writes d in whole seconds (5s) or milliseconds (1500ms).
// (Duration.String would add a kilobyte to the binary.)
func duration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// signalSubtree sends sig, then followUp unless 0, to what remains of the
// subtree, until deadline (see reaper.SignalSubtree), counts what it reached
// and what refused and, with say, says so.
func (s *Supervisor) signalSubtree(sig, followUp unix.Signal, deadline time.Duration, say bool) (sent, refused int) {
	sent, refused = s.signal(sig, followUp, true, deadline)
	if !say || !s.Log.InfoEnabled() {
		return sent, refused
	}
	to := "every other process of the PID namespace"
	if s.blind() {
		to = "the program's process group (no /proc to find the init's descendants in)"
	} else if !s.pid1 {
		to = "the init's " + strconv.Itoa(sent) + " remaining descendants"
	}
	s.Log.Info("sent ", signals.Name(sig), " to ", to)
	return sent, refused
}

// sweep is signalSubtree without counting or saying anything: as PID 1, a
// single kill(-1). The init sweeps while a fork bomb may take every CPU: a
// sweep that fits in one time slice ends it sooner.
func (s *Supervisor) sweep(sig unix.Signal, deadline time.Duration) {
	s.signal(sig, 0, false, deadline)
}

// signal sends sig to what remains of the subtree. When the init is not
// PID 1, the program's process group gets it first (see signalGroup): in
// one system call, what a fork bomb in it forks meanwhile included, where
// signalling descendants found in /proc one by one can take seconds. The
// descendants found in that group then do not get sig a second time, unless
// it is SIGKILL: a second SIGKILL does no harm, and should the group's number
// have been reused meanwhile, the processes of the new group still get it.
// When the kernel cannot signal a group through a pidfd, the group is signalled
// by number, and only when the init is no subreaper, or is one without a
// /proc to find its descendants in: there the program's orphans are,
// unless they left it.
func (s *Supervisor) signal(sig, followUp unix.Signal, count bool, deadline time.Duration) (sent, refused int) {
	grouped, reached := false, false
	if !s.pid1 {
		grouped, reached = s.signalGroup(sig)
	}
	if reached && followUp != 0 {
		s.signalGroup(followUp)
	}
	group := 0
	if reached && sig != unix.SIGKILL {
		group = s.child
	}
	sent, refused = reaper.SignalSubtree(sig, followUp, group, s.pid1, count, deadline)
	if !grouped && (!s.subreaper || s.blind()) {
		unix.Kill(-s.child, sig)
		if followUp != 0 {
			unix.Kill(-s.child, followUp)
		}
	}
	return sent, refused
}

// signalGroup sends sig to the program's process group through the
// program's pidfd (pidfd_send_signal with PIDFD_SIGNAL_PROCESS_GROUP, Linux
// 6.9): the kernel signals the processes of that very group, never one that
// a reused pid names, as kill(-pid) could once the group is empty. It
// reports whether the kernel took the request (an empty group included),
// and whether sig reached a process of the group.
func (s *Supervisor) signalGroup(sig unix.Signal) (taken, reached bool) {
	if s.childFd < 0 || s.sameGroup {
		return false, false // the program shares the init's group
	}
	err := unix.PidfdSendSignal(s.childFd, sig, nil, pidfdSignalProcessGroup)
	return err == nil || err == unix.ESRCH, err == nil
}

// pidfdSignalProcessGroup is PIDFD_SIGNAL_PROCESS_GROUP (linux/pidfd.h).
const pidfdSignalProcessGroup = 1 << 2

// blind reports whether the init is a subreaper that cannot find its
// descendants: there is no /proc that shows it.
func (s *Supervisor) blind() bool {
	return s.subreaper && !s.pid1 && !reaper.FindsDescendants()
}

// leftoverCount bounds the sweep that counts what is left at exit.
const leftoverCount = 200 * time.Millisecond

// reportLeftovers says, once, how many processes remain after SIGKILL and
// why, with a last sweep that counts them. As a subreaper, when that sweep
// runs out of its time (a fork bomb of another user takes the CPUs), it
// says that it could not count them rather than a count of what it found.
func (s *Supervisor) reportLeftovers() {
	if !s.Log.InfoEnabled() {
		return
	}
	deadline := monotonic() + leftoverCount
	sent, refused := s.signalSubtree(unix.SIGKILL, 0, deadline, false)
	what := strconv.Itoa(sent+refused) + " processes left: " +
		strconv.Itoa(refused) + " the init may not signal (EPERM: another user's), " +
		strconv.Itoa(sent) + " still there after SIGKILL"
	if s.blind() {
		what = "children left that it cannot find without /proc"
	} else if !s.pid1 && monotonic() >= deadline {
		what = "processes left that it could not count: a walk of /proc took over " + duration(leftoverCount) +
			" (" + strconv.Itoa(refused) + " found that it may not signal, " + strconv.Itoa(sent) + " still there after SIGKILL)"
	}
	where := "the kernel kills them when the init exits"
	if !s.pid1 {
		where = "leaving them to the reaper above the init"
	}
	s.Log.Info("exiting with ", what, "; ", where)
}
