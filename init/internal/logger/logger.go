// Package logger writes the init's messages to standard error, one line each,
// prefixed with "[init] " so that they stand apart from the program's output.
//
// Messages are queued and written by one goroutine, so that a standard
// error nobody reads never stalls the init: the caller never blocks, and
// when the queue is full the message is dropped and counted. A write that
// blocks holds a thread, not the init's goroutine: the runtime runs that
// one on another thread (see supervisor/threads.go). The SIGPIPE or SIGXFSZ
// a write to a closed pipe or past a file size limit raises comes to the
// init as a signal it sent itself, which the supervisor does not forward.
// After a write fails (EPIPE, EFBIG, EIO ...) the logger writes nothing
// more.
package logger

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/config"
)

// Prefix starts every line the init writes.
const Prefix = "[init] "

// queueSize is how many messages wait to be written before new ones are
// dropped; batchSize how many bytes one write(2) carries at most (a pipe
// writes up to 4096 bytes atomically).
const (
	queueSize = 4096
	batchSize = 4096
)

// Logger writes the messages at or below its level.
type Logger struct {
	Level config.Level
}

// Error writes a message whatever the level.
func (l Logger) Error(parts ...string) { enqueue(parts) }

// Info writes a message when the level is info or debug.
func (l Logger) Info(parts ...string) {
	if l.Level >= config.LevelInfo {
		enqueue(parts)
	}
}

// Debug writes a message when the level is debug.
func (l Logger) Debug(parts ...string) {
	if l.Level >= config.LevelDebug {
		enqueue(parts)
	}
}

// InfoEnabled reports whether info messages are written, so that callers can
// skip building them.
func (l Logger) InfoEnabled() bool { return l.Level >= config.LevelInfo }

// DebugEnabled reports whether debug messages are written.
func (l Logger) DebugEnabled() bool { return l.Level >= config.LevelDebug }

// message is a line to write, or, with flushed set, a request to be told
// when every line queued before it has been written.
type message struct {
	line    string
	flushed chan struct{}
}

var (
	start   sync.Once
	started atomic.Bool
	queue   chan message
	dropped atomic.Int64
)

// enqueue queues a line, starting the writer on the first one.
func enqueue(parts []string) {
	start.Do(startWriter)
	select {
	case queue <- message{line: line(parts)}:
	default:
		dropped.Add(1)
	}
}

// line joins the parts of a message into a line. (strings.Join would add
// a kilobyte to the binary.)
func line(parts []string) string {
	line := Prefix
	for _, part := range parts {
		line += part
	}
	return line + "\n"
}

// Flush waits until every message queued so far has been written, or for at
// most timeout when standard error does not take them. Meanwhile SIGTTOU is
// ignored (see Unstopped).
func Flush(timeout time.Duration) {
	if !started.Load() {
		return // nothing was ever logged
	}
	defer Unstopped()()
	flushed := make(chan struct{})
	expired := make(chan struct{})
	timer := time.AfterFunc(timeout, func() { close(expired) })
	defer timer.Stop()
	select {
	case queue <- message{flushed: flushed}:
	case <-expired:
		return
	}
	select {
	case <-flushed:
	case <-expired:
	}
}

// Unstopped ignores SIGTTOU until the function it returns is called, which
// puts back the action it replaced. Before its program starts, the init may
// be a background process of a terminal with tostop set, where a write to
// the terminal stops a process that neither ignores nor blocks SIGTTOU:
// the lines the init writes before it exits or executes its program in its
// place are written instead, and the program runs, as it would without the
// init. (From the program's start on, the supervisor ignores SIGTTOU.)
func Unstopped() (restore func()) {
	ignore := sigaction{handler: 1} // SIG_IGN
	var old sigaction
	if rtSigaction(unix.SIGTTOU, &ignore, &old) != nil {
		return func() {}
	}
	return func() { rtSigaction(unix.SIGTTOU, &old, nil) }
}

// sigaction is the kernel's struct sigaction on amd64 and arm64.
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// rtSigaction is rt_sigaction(2), beside the Go runtime.
func rtSigaction(sig unix.Signal, act, old *sigaction) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(act)),
		uintptr(unsafe.Pointer(old)), unsafe.Sizeof(act.mask), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func startWriter() {
	queue = make(chan message, queueSize)
	go writer()
	started.Store(true)
}

// writer writes the queued lines, as many as are waiting in one write(2),
// and reports dropped ones. It never returns.
func writer() {
	broken := false
	var buf []byte
	for m := range queue {
		buf = append(buf[:0], m.line...)
		for m.flushed == nil && len(buf) < batchSize && len(queue) > 0 {
			m = <-queue // the writer is the only receiver: this does not block
			buf = append(buf, m.line...)
		}
		if n := dropped.Swap(0); n > 0 {
			buf = append(buf, Prefix+strconv.FormatInt(n, 10)+" messages dropped: standard error did not take them\n"...)
		}
		if !broken {
			broken = !write(buf)
		}
		if m.flushed != nil {
			close(m.flushed)
		}
	}
}

// write writes buf to standard error and reports whether standard error can
// still be written to. A full non-blocking standard error drops buf.
func write(buf []byte) bool {
	for len(buf) > 0 {
		n, err := unix.Write(2, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return true
		case err != nil || n <= 0:
			return false
		}
		buf = buf[n:]
	}
	return true
}
