package signals_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/signals"
)

func TestSignals(t *testing.T) {
	spec.Run(t, "Signals", testSignals, spec.Report(report.Terminal{}))
}

func testSignals(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	context("Parse", func() {
		for _, c := range []struct {
			in   string
			want unix.Signal
		}{
			{"TERM", unix.SIGTERM}, {"SIGTERM", unix.SIGTERM}, {"sigterm", unix.SIGTERM}, {"Quit", unix.SIGQUIT},
			{"1", unix.SIGHUP}, {"64", 64}, {"35", 35}, {"winch", unix.SIGWINCH},
		} {
			it("parses "+c.in, func() {
				sig, ok := signals.Parse(c.in)
				Expect(ok).To(BeTrue())
				Expect(sig).To(Equal(c.want))
			})
		}
		for _, bad := range []string{"", "0", "65", "-1", "SIG", "TERMS", "SIGSIGTERM", " TERM"} {
			it("refuses "+bad, func() {
				_, ok := signals.Parse(bad)
				Expect(ok).To(BeFalse())
			})
		}
	})

	it("names signals, and real-time ones by number", func() {
		Expect(signals.Name(unix.SIGTERM)).To(Equal("SIGTERM"))
		Expect(signals.Name(40)).To(Equal("signal 40"))
	})

	it("forwards every catchable signal but the runtime's, libc's, SIGCHLD and the terminal ones", func() {
		var not []unix.Signal
		for sig := unix.Signal(0); sig <= 65; sig++ {
			if !signals.Forwardable(sig) {
				not = append(not, sig)
			}
		}
		Expect(not).To(Equal([]unix.Signal{0, unix.SIGKILL, unix.SIGCHLD, unix.SIGSTOP, unix.SIGTTIN, unix.SIGTTOU,
			unix.SIGURG, unix.SIGPROF, 32, 33, 65}))
	})
}
