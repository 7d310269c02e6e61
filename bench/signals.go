package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The signal benchmark. This binary runs in receiver mode as the init's child; the harness
// sends SIGUSR1 to the init's host pid (from outside its PID namespace) and the receiver
// writes (sequence number, CLOCK_MONOTONIC at receipt) to a FIFO. Latency is receipt time
// minus the time taken just before kill(2). The next signal goes only after the previous
// one was received, plus a pause, so signals never coalesce. The receiver's own delivery
// path (Go's signal handler, then a channel) is measured by sending to it directly with no
// init in between: that row is the floor. Where tracefs is available, the kernel's own
// record of each signal (see trace.go) times the init without the receiver's part.

const recordSize = 16

func monotonicNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// receiverMain is receiver mode: one record per SIGUSR1, until SIGTERM or SIGINT.
func receiverMain(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("receiver mode expects FIFO, got %q", args)
	}
	fifo, err := os.OpenFile(args[0], os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("unable to open %s: %w", args[0], err)
	}
	usr1 := make(chan os.Signal, 4096)
	signal.Notify(usr1, syscall.SIGUSR1)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	var rec [recordSize]byte
	write := func(seq uint64, at int64) error {
		binary.LittleEndian.PutUint64(rec[0:], seq)
		binary.LittleEndian.PutUint64(rec[8:], uint64(at))
		_, err := fifo.Write(rec[:])
		return err
	}
	if err := write(0, monotonicNow()); err != nil {
		return fmt.Errorf("unable to report ready: %w", err)
	}
	for seq := uint64(1); ; seq++ {
		select {
		case <-usr1:
			if err := write(seq, monotonicNow()); err != nil {
				return fmt.Errorf("unable to report signal %d: %w", seq, err)
			}
		case <-stop:
			return nil
		}
	}
}

// signalResult is the signal benchmark's outcome for one init (or none).
type signalResult struct {
	latencies sample
	lost      int
	// From the kernel trace, when available: the harness's kill(2) to the delivery in the
	// child, and the harness's kill(2) to the init's own kill(2) for the child.
	kernel, inInit sample
	traceNote      string
}

// receiver is one receiver and the pid signals are sent to: the init's, or its own.
type receiver struct {
	name     string
	target   int
	child    int // the receiver's own pid: target itself when there is no init
	sent     []int64
	fifo     *os.File
	stop     func() error
	received uint64
	rec      [recordSize]byte
}

func (r *receiver) read(timeout time.Duration) (uint64, int64, error) {
	_ = r.fifo.SetReadDeadline(time.Now().Add(timeout))
	if _, err := fullRead(r.fifo, r.rec[:]); err != nil {
		return 0, 0, err
	}
	return binary.LittleEndian.Uint64(r.rec[0:]), int64(binary.LittleEndian.Uint64(r.rec[8:])), nil
}

// startReceiver starts the receiver under in as PID 1, or with in nil as a plain child.
func startReceiver(in *initProgram, self, workDir string) (*receiver, error) {
	r := &receiver{name: "direct"}
	if in != nil {
		r.name = in.name
	}
	fifoPath := filepath.Join(workDir, "signals-"+r.name+".fifo")
	_ = os.Remove(fifoPath)
	if err := unix.Mkfifo(fifoPath, 0o600); err != nil {
		return nil, fmt.Errorf("unable to make FIFO %s: %w", fifoPath, err)
	}
	// O_RDWR never blocks on a FIFO; reads time out through deadlines.
	fifo, err := os.OpenFile(fifoPath, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("unable to open FIFO %s: %w", fifoPath, err)
	}
	r.fifo = fifo
	if in == nil {
		cmd := exec.Command(self, "__receiver", fifoPath)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fifo.Close()
			return nil, fmt.Errorf("unable to start the receiver: %w", err)
		}
		r.target = cmd.Process.Pid
		r.child = r.target
		r.stop = func() error {
			defer os.Remove(fifoPath)
			defer fifo.Close()
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return cmd.Wait()
		}
	} else {
		p, err := startPID1(in, nil, self, "__receiver", fifoPath)
		if err != nil {
			fifo.Close()
			return nil, err
		}
		r.target = p.hostPID
		selfReal, err := filepath.EvalSymlinks(self)
		if err != nil {
			selfReal = self
		}
		if r.child, err = waitForChild(p.hostPID, selfReal, 5*time.Second); err != nil {
			p.kill()
			fifo.Close()
			return nil, fmt.Errorf("%s did not start the receiver: %w", in.name, err)
		}
		r.stop = func() error {
			defer os.Remove(fifoPath)
			defer fifo.Close()
			// SIGTERM is forwarded to the receiver, which exits 0, and so does the init.
			_ = syscall.Kill(p.hostPID, syscall.SIGTERM)
			return p.wait(10 * time.Second)
		}
	}
	if _, _, err := r.read(10 * time.Second); err != nil {
		_ = r.stop()
		return nil, fmt.Errorf("receiver under %s never reported ready: %w", r.name, err)
	}
	return r, nil
}

// measureSignals sends n SIGUSR1 to each init as PID 1, and straight to a receiver with no
// init ("direct"), one signal at a time, round-robin over the receivers with a rotating
// start, and collects the latencies.
func measureSignals(inits []*initProgram, self, workDir string, n int, pause time.Duration) (map[string]signalResult, error) {
	var receivers []*receiver
	stopAll := func() error {
		var first error
		for _, r := range receivers {
			if err := r.stop(); err != nil && first == nil {
				first = fmt.Errorf("receiver under %s did not stop cleanly: %w", r.name, err)
			}
		}
		receivers = nil
		return first
	}
	defer stopAll()
	r, err := startReceiver(nil, self, workDir)
	if err != nil {
		return nil, err
	}
	receivers = append(receivers, r)
	for _, in := range inits {
		r, err := startReceiver(in, self, workDir)
		if err != nil {
			return nil, err
		}
		receivers = append(receivers, r)
	}

	trace, traceErr := startSignalTrace()
	if traceErr == nil {
		defer trace.remove()
	}

	results := map[string]signalResult{}
	for i := 0; i < n; i++ {
		for k := range receivers {
			r := receivers[(k+i)%len(receivers)]
			res := results[r.name]
			sent := monotonicNow()
			r.sent = append(r.sent, sent)
			if err := syscall.Kill(r.target, syscall.SIGUSR1); err != nil {
				return nil, fmt.Errorf("unable to signal %s (pid %d): %w", r.name, r.target, err)
			}
			for {
				seq, at, err := r.read(time.Second)
				if err != nil {
					res.lost++ // no receipt within a second
					break
				}
				if seq <= r.received {
					continue
				}
				r.received = seq
				res.latencies = append(res.latencies, time.Duration(at-sent))
				break
			}
			results[r.name] = res
			time.Sleep(pause)
		}
	}
	addTrace(results, receivers, trace, traceErr)
	if err := stopAll(); err != nil {
		return nil, err
	}
	return results, nil
}

// addTrace pairs the traced SIGUSR1 events with the signals sent, in order, or notes why it
// cannot: per receiver, the harness queuing the signal for the init, the init queuing it for
// the child, and the kernel delivering it to the child.
func addTrace(results map[string]signalResult, receivers []*receiver, trace *signalTrace, traceErr error) {
	var events []signalEvent
	if traceErr == nil {
		events, traceErr = trace.events()
	}
	self := os.Getpid()
	for _, r := range receivers {
		res := results[r.name]
		var toInit, toChild, delivered []int64
		for _, e := range events {
			switch {
			case e.deliver && e.tgid == r.child:
				delivered = append(delivered, e.at)
			case !e.deliver && e.tgid == self && e.target == r.target:
				toInit = append(toInit, e.at)
			case !e.deliver && r.child != r.target && e.tgid == r.target && e.target == r.child:
				toChild = append(toChild, e.at)
			}
		}
		if r.child == r.target {
			toChild = toInit
		}
		n := len(r.sent)
		switch {
		case traceErr != nil:
			res.traceNote = traceErr.Error()
		case res.lost > 0:
			res.traceNote = "signals were lost"
		case len(toInit) != n || len(toChild) != n || len(delivered) != n:
			res.traceNote = fmt.Sprintf("for %d signals the trace has %d sent to the init, %d sent on to the child, %d delivered to the child", n, len(toInit), len(toChild), len(delivered))
		default:
			for k := range n {
				res.kernel = append(res.kernel, time.Duration(delivered[k]-toInit[k]))
				if r.child != r.target {
					res.inInit = append(res.inInit, time.Duration(toChild[k]-toInit[k]))
				}
			}
		}
		results[r.name] = res
	}
}

func fullRead(f *os.File, buf []byte) (int, error) {
	total := 0
	for total < len(buf) {
		n, err := f.Read(buf[total:])
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
