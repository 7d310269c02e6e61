package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	specreport "github.com/sclevine/spec/report"
)

func TestBench(t *testing.T) {
	spec.Run(t, "Bench", testBench, spec.Report(specreport.Terminal{}))
}

func testBench(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	context("sample", func() {
		it("takes nearest-rank percentiles whatever the order", func() {
			var s sample
			for i := 100; i >= 1; i-- {
				s = append(s, time.Duration(i))
			}
			Expect(s.median()).To(Equal(time.Duration(50)))
			Expect(s.percentile(90)).To(Equal(time.Duration(90)))
			Expect(s.percentile(99)).To(Equal(time.Duration(99)))
			Expect(s.percentile(100)).To(Equal(time.Duration(100)))
			Expect(s[0]).To(Equal(time.Duration(100)), "percentile must not sort in place")
			Expect(sample{}.median()).To(Equal(time.Duration(0)))
		})
	})

	// The harness must measure, not assume: these check that its probes react to reality.
	context("timeRun", func() {
		it("measures the wall time of the program it runs", func() {
			attr := &syscall.ProcAttr{Files: []uintptr{0, 1, 2}}
			sleep, err := exec.LookPath("sleep")
			Expect(err).NotTo(HaveOccurred())
			d, err := timeRun([]string{sleep, "0.05"}, attr)
			Expect(err).NotTo(HaveOccurred())
			Expect(d).To(BeNumerically(">=", 50*time.Millisecond))
			Expect(d).To(BeNumerically("<", 2*time.Second))
		})

		it("fails when the program does not exit 0", func() {
			f, err := exec.LookPath("false")
			Expect(err).NotTo(HaveOccurred())
			_, err = timeRun([]string{f}, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
			Expect(err).To(MatchError(ContainSubstring("expected exit 0")))
		})
	})

	context("gofloor", func() {
		var floor string

		it.Before(func() {
			floor = filepath.Join(t.TempDir(), "gofloor")
			build := exec.Command("go", "build", "-o", floor, "./gofloor")
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			out, err := build.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "go build ./gofloor: %s", out)
		})

		for _, tc := range []struct {
			name   string
			args   []string
			code   int
			stderr string
		}{
			{"passes exit 0 through", []string{"--", "/bin/sh", "-c", "exit 0"}, 0, ""},
			{"passes a non-zero exit code through", []string{"--", "/bin/sh", "-c", "exit 7"}, 7, ""},
			{"exits 128+N when signal N ends the program", []string{"--", "/bin/sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM), ""},
			{"exits 127 naming a program it cannot start", []string{"--", "/nonexistent/prog"}, 127, "gofloor: unable to start /nonexistent/prog: no such file or directory"},
			{"exits 2 with the usage without --", []string{"/bin/true"}, 2, "gofloor: usage: gofloor -- PROG [ARG...]"},
		} {
			it(tc.name, func() {
				cmd := exec.Command(floor, tc.args...)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				err := cmd.Run()
				code := 0
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				} else {
					Expect(err).NotTo(HaveOccurred())
				}
				Expect(code).To(Equal(tc.code), "stderr: %s", stderr.String())
				if tc.stderr == "" {
					Expect(stderr.String()).To(BeEmpty())
				} else {
					Expect(stderr.String()).To(ContainSubstring(tc.stderr))
				}
			})
		}

		it("is measured for footprint and start-up, not for reaping or signals", func() {
			inits, err := newInits("", "", floor, "test", "/bin/true", "/bin/true", "/bin/true", "/bin/true", nil)
			Expect(err).NotTo(HaveOccurred())
			var names, supervising []string
			for _, in := range inits {
				names = append(names, in.name)
			}
			for _, in := range supervisors(inits) {
				supervising = append(supervising, in.name)
			}
			Expect(names).To(Equal([]string{goFloorName, "tini", "tini-static", "dumb-init", "catatonit"}))
			Expect(supervising).To(Equal([]string{"tini", "tini-static", "dumb-init", "catatonit"}))
		})
	})

	context("parseSignalTrace", func() {
		it("reads generate and deliver events with their thread group and target", func() {
			events, err := parseSignalTrace(`# tracer: nop
#
           bench-4242    ( 4240) [001] d..1.  1559.000012: signal_generate: sig=10 errno=0 code=0 comm=init pid=5000 grp=1 res=0
   init worker-5003    ( 5000) [000] d..1.  1559.000040: signal_generate: sig=10 errno=0 code=0 comm=bench pid=5001 grp=1 res=0
           bench-5001    ( 5001) [001] d..1.  1559.000061: signal_deliver: sig=10 errno=0 code=0 sa_handler=46a2e0 sa_flags=1c000004
           bench-5001    ( 5001) [001] d..1.  1559.000070: signal_deliver: sig=15 errno=0 code=0 sa_handler=46a2e0 sa_flags=1c000004
`)
			Expect(err).NotTo(HaveOccurred())
			Expect(events).To(Equal([]signalEvent{
				{deliver: false, at: 1559_000_012_000, tgid: 4240, target: 5000},
				{deliver: false, at: 1559_000_040_000, tgid: 5000, target: 5001},
				{deliver: true, at: 1559_000_061_000, tgid: 5001},
			}))
		})

		it("refuses a trace that lost events", func() {
			_, err := parseSignalTrace("CPU:1 [LOST 12 EVENTS]\n")
			Expect(err).To(HaveOccurred())
		})
	})

	context("/proc probes", func() {
		it("reads a real resident size and thread count", func() {
			st, err := readStatus(os.Getpid())
			Expect(err).NotTo(HaveOccurred())
			Expect(st.rssKiB).To(BeNumerically(">", 100))
			Expect(st.threads).To(BeNumerically(">=", 1))
		})

		it("counts wake-ups of a busy process and none of a sleeping one", func() {
			busy := exec.Command("sh", "-c", "while :; do sleep 0.01; done")
			idle := exec.Command("sleep", "60")
			Expect(busy.Start()).To(Succeed())
			Expect(idle.Start()).To(Succeed())
			defer func() {
				_ = busy.Process.Kill()
				_ = idle.Process.Kill()
				_ = busy.Wait()
				_ = idle.Wait()
			}()
			time.Sleep(100 * time.Millisecond)
			busy0, err := contextSwitches(busy.Process.Pid)
			Expect(err).NotTo(HaveOccurred())
			idle0, err := contextSwitches(idle.Process.Pid)
			Expect(err).NotTo(HaveOccurred())
			time.Sleep(300 * time.Millisecond)
			busy1, err := contextSwitches(busy.Process.Pid)
			Expect(err).NotTo(HaveOccurred())
			idle1, err := contextSwitches(idle.Process.Pid)
			Expect(err).NotTo(HaveOccurred())
			Expect(busy1 - busy0).To(BeNumerically(">=", 5))
			Expect(idle1 - idle0).To(Equal(int64(0)))
		})

		it("lists the children of a process", func() {
			cmd := exec.Command("sleep", "60")
			Expect(cmd.Start()).To(Succeed())
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			kids, err := children(os.Getpid())
			Expect(err).NotTo(HaveOccurred())
			Expect(kids).To(ContainElement(cmd.Process.Pid))
		})
	})
}
