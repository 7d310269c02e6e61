package supervisor

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/reaper"
	"github.com/pid1-buildpacks/init/init/internal/signals"
)

// killWait is how long, after SIGKILL, the init waits for the processes that
// remain to be gone before it exits and leaves what is still there: to the
// kernel, which kills every process of a PID namespace when its PID 1 exits,
// or, as a subreaper, to the reaper above the init. Processes of another user
// (EPERM) and processes that do not die of SIGKILL (stuck in the kernel)
// remain. With the logger's flush (see main) this bounds the init's exit to
// the grace period plus 1.5 s after the program has exited.
const killWait = time.Second

// killRetry is how often the subtree is swept with SIGKILL again during
// killWait, to catch processes forked in between.
const killRetry = 100 * time.Millisecond

// endSubtree ends what the program left behind: the processes that remain
// get SIGTERM and SIGCONT and up to the grace period to exit, then SIGKILL
// and up to killWait. It returns when nothing remains or when that time has
// passed, and then says, once, what remains and why. As soon as all that
// remains is processes the init may not signal, it returns too.
func (s *Supervisor) endSubtree() {
	if s.gone() {
		return
	}
	// SIGCONT after SIGTERM, as systemd does: a stopped process would
	// otherwise only see the SIGTERM when SIGKILL ends it.
	sent, refused := s.signalSubtree(unix.SIGTERM, true)
	s.signalSubtree(unix.SIGCONT, false)
	var unreachable func() bool
	if refused > 0 && s.subreaper {
		// Processes of another user were not told to stop: waiting for
		// them would only delay the exit that ends them, as the program's
		// exit would have without the init.
		unreachable = s.onlyUnsignallable
		if sent == 0 {
			s.reportLeftovers()
			return
		}
	}
	s.Log.Info("waiting up to ", duration(s.Config.GracePeriod), " for the remaining processes")
	if s.settle(s.Config.GracePeriod, nil, unreachable) {
		return
	}
	if unreachable != nil && unreachable() {
		s.reportLeftovers()
		return
	}
	s.signalSubtree(unix.SIGKILL, true)
	if s.settle(killWait, func() { s.signalSubtree(unix.SIGKILL, false) }, nil) {
		return
	}
	s.reportLeftovers()
}

// onlyUnsignallable reports whether all that remains of the subtree is
// processes the init may not signal.
func (s *Supervisor) onlyUnsignallable() bool {
	s.mu.Lock()
	sent, refused := reaper.SignalSubtree(0, s.pid1)
	s.mu.Unlock()
	return sent == 0 && refused > 0
}

// gone reports whether nothing of the subtree remains: the init has no child
// left and, when it is no subreaper, the program's process group is empty
// (its orphans are no longer the init's children).
func (s *Supervisor) gone() bool {
	select {
	case <-s.none:
	default:
		return false
	}
	return s.subreaper || unix.Kill(-s.child, 0) == unix.ESRCH
}

// settle waits up to d for the subtree to be gone and reports whether it is;
// with unreachable, it stops waiting, reporting false, as soon as that is
// true. With tick or unreachable, or when the init has to look for the
// program's process group, it wakes every killRetry (calling tick);
// otherwise it sleeps until the last child is reaped.
func (s *Supervisor) settle(d time.Duration, tick func(), unreachable func() bool) bool {
	expired := after(d)
	none := s.none
	for {
		var retry <-chan struct{}
		if tick != nil || unreachable != nil || !s.subreaper {
			retry = after(killRetry)
		}
		select {
		case <-none:
			none = nil // closed: from now on, only the timers wake
		case <-retry:
		case <-expired:
			return s.gone()
		}
		if s.gone() {
			return true
		}
		if unreachable != nil && unreachable() {
			return false
		}
		if tick != nil {
			tick()
		}
	}
}

// duration writes d in whole seconds (5s) or milliseconds (1500ms).
// (Duration.String would add a kilobyte to the binary.)
func duration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// after returns a channel closed when d has passed. (time.AfterFunc rather
// than time.After: a Timer's channel of time.Time would link time
// formatting and time zones into the binary.)
func after(d time.Duration) <-chan struct{} {
	c := make(chan struct{})
	time.AfterFunc(d, func() { close(c) })
	return c
}

// signalSubtree sends sig to what remains of the subtree and, with say, says
// so. When the init is no subreaper, the program's process group gets it
// too: the program's orphans are no longer the init's descendants.
func (s *Supervisor) signalSubtree(sig unix.Signal, say bool) (sent, refused int) {
	s.mu.Lock()
	sent, refused = reaper.SignalSubtree(sig, s.pid1)
	if !s.subreaper {
		unix.Kill(-s.child, sig)
	}
	s.mu.Unlock()
	if !say || !s.Log.InfoEnabled() {
		return sent, refused
	}
	if s.pid1 {
		s.Log.Info("sent ", signals.Name(sig), " to every other process of the PID namespace")
	} else {
		s.Log.Info("sent ", signals.Name(sig), " to the init's ", strconv.Itoa(sent), " remaining descendants")
	}
	return sent, refused
}

// reportLeftovers says, once, how many processes remain after SIGKILL and
// why, with a last sweep that counts them.
func (s *Supervisor) reportLeftovers() {
	if !s.Log.InfoEnabled() {
		return
	}
	sent, refused := s.signalSubtree(unix.SIGKILL, false)
	msg := "exiting with " + strconv.Itoa(sent+refused) + " processes left: " +
		strconv.Itoa(refused) + " the init may not signal (EPERM: another user's), " +
		strconv.Itoa(sent) + " still there after SIGKILL; "
	if s.pid1 {
		msg += "the kernel kills them when the init exits"
	} else {
		msg += "leaving them to the reaper above the init"
	}
	s.Log.Info(msg)
}
