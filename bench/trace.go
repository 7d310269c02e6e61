package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// signalTrace records SIGUSR1 through a private tracefs instance: signal:signal_generate
// fires in the sender when a signal is queued (kill(2)), signal:signal_deliver in the
// receiving thread just before its handler runs. This times forwarding without the
// receiver's own user-space path, and works for every init alike: from the harness queuing
// the signal for the init to the init queuing it for the child ("inside the init"), and on to
// the kernel handing it to the child's handler.
type signalTrace struct {
	dir string
}

// tracefsMounts are where tracefs usually is.
var tracefsMounts = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// startSignalTrace makes and enables the instance, or says why it cannot.
func startSignalTrace() (*signalTrace, error) {
	tracefs := ""
	for _, dir := range tracefsMounts {
		if _, err := os.Stat(filepath.Join(dir, "instances")); err == nil {
			tracefs = dir
			break
		}
	}
	if tracefs == "" {
		return nil, fmt.Errorf("no tracefs at %s", strings.Join(tracefsMounts, " or "))
	}
	t := &signalTrace{dir: filepath.Join(tracefs, "instances", fmt.Sprintf("init-bench-%d", os.Getpid()))}
	if err := os.Mkdir(t.dir, 0o755); err != nil {
		return nil, fmt.Errorf("unable to make tracefs instance %s: %w", t.dir, err)
	}
	for _, w := range []struct{ file, value string }{
		{"trace_clock", "mono"}, // the same clock as CLOCK_MONOTONIC
		{"buffer_size_kb", "8192"},
		{"options/record-tgid", "1"},
		{"events/signal/signal_deliver/filter", "sig == 10"},
		{"events/signal/signal_generate/filter", "sig == 10"},
		{"events/signal/signal_deliver/enable", "1"},
		{"events/signal/signal_generate/enable", "1"},
		{"tracing_on", "1"},
	} {
		if err := os.WriteFile(filepath.Join(t.dir, w.file), []byte(w.value), 0); err != nil {
			t.remove()
			return nil, fmt.Errorf("unable to set %s in %s: %w", w.file, t.dir, err)
		}
	}
	return t, nil
}

// signalEvent is one traced SIGUSR1 event.
type signalEvent struct {
	deliver bool  // signal_deliver, else signal_generate
	at      int64 // CLOCK_MONOTONIC, ns
	tgid    int   // the thread group the event happened in: the sender, or the receiver
	target  int   // signal_generate: the pid the signal was queued for
}

// traceLine matches "comm-tid (tgid) [cpu] flags seconds.micros: signal_xxx: sig=10 ...".
var (
	traceLine   = regexp.MustCompile(`-\d+\s+\(\s*(\d+)\)\s+\[\d+\]\s+\S+\s+(\d+)\.(\d+): signal_(deliver|generate): sig=10 (.*)$`)
	generatePID = regexp.MustCompile(` pid=(\d+) `)
)

// events stops tracing and returns the SIGUSR1 events in the order they were recorded.
func (t *signalTrace) events() ([]signalEvent, error) {
	defer t.remove()
	_ = os.WriteFile(filepath.Join(t.dir, "tracing_on"), []byte("0"), 0)
	data, err := os.ReadFile(filepath.Join(t.dir, "trace"))
	if err != nil {
		return nil, fmt.Errorf("unable to read the trace: %w", err)
	}
	return parseSignalTrace(string(data))
}

// parseSignalTrace reads the SIGUSR1 events out of a tracefs "trace" file.
func parseSignalTrace(data string) ([]signalEvent, error) {
	var out []signalEvent
	for _, line := range strings.Split(data, "\n") {
		if strings.Contains(line, "[LOST ") { // "CPU:1 [LOST 12 EVENTS]"
			return nil, fmt.Errorf("the trace lost events: %s", line)
		}
		m := traceLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		e := signalEvent{deliver: m[4] == "deliver"}
		e.tgid, _ = strconv.Atoi(m[1])
		sec, _ := strconv.ParseInt(m[2], 10, 64)
		frac := (m[3] + "000000000")[:9]
		ns, _ := strconv.ParseInt(frac, 10, 64)
		e.at = sec*1e9 + ns
		if !e.deliver {
			p := generatePID.FindStringSubmatch(m[5])
			if p == nil {
				return nil, fmt.Errorf("no target pid in trace line %q", line)
			}
			e.target, _ = strconv.Atoi(p[1])
		}
		out = append(out, e)
	}
	return out, nil
}

func (t *signalTrace) remove() {
	_ = os.WriteFile(filepath.Join(t.dir, "events/signal/signal_deliver/enable"), []byte("0"), 0)
	_ = os.Remove(t.dir)
}
