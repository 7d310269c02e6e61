package reaper_test

import (
	"os/exec"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/reaper"
)

func TestReaper(t *testing.T) {
	spec.Run(t, "Reaper", testReaper, spec.Report(report.Terminal{}))
}

func testReaper(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
	)

	context("ExitCode", func() {
		// A wait status is the exit code << 8, or the signal number.
		for _, c := range []struct {
			name   string
			status unix.WaitStatus
			code   int
		}{
			{"exit 0", 0, 0}, {"exit 1", 1 << 8, 1}, {"exit 255", 255 << 8, 255},
			{"SIGKILL", unix.WaitStatus(unix.SIGKILL), 137}, {"SIGTERM", unix.WaitStatus(unix.SIGTERM), 143},
			{"SIGSEGV with core", unix.WaitStatus(unix.SIGSEGV) | 0x80, 139}, {"signal 64", 64, 192},
		} {
			it("gives "+itoa(c.code)+" for "+c.name, func() {
				Expect(reaper.ExitCode(c.status)).To(Equal(c.code))
			})
		}
	})

	context("ParseStat", func() {
		for _, c := range []struct {
			stat       string
			ppid, pgrp int
			ok         bool
		}{
			{"42 (sleep) S 7 40 40 0 -1", 7, 40, true},
			{"42 (a) b) (c) R 1 42", 1, 42, true},
			{"42 (with space) Z 123 0", 123, 0, true},
			{"42 (x", 0, 0, false},
			{"42 (x) S", 0, 0, false},
			{"42 (x) S abc", 0, 0, false},
			{"42 (x) S 7", 0, 0, false},
			{"42 (x) S 7 abc", 0, 0, false},
		} {
			it("parses "+c.stat, func() {
				ppid, pgrp, ok := reaper.ParseStat(c.stat)
				Expect(ok).To(Equal(c.ok))
				Expect(ppid).To(Equal(c.ppid))
				Expect(pgrp).To(Equal(c.pgrp))
			})
		}
	})

	it("reaps exited children, reports those that remain, and finds descendants", func() {
		quick := exec.Command("sh", "-c", "exit 3")
		Expect(quick.Start()).To(Succeed())
		slow := exec.Command("sh", "-c", "sleep 5 & wait")
		Expect(slow.Start()).To(Succeed())
		defer slow.Process.Kill()

		Eventually(func() []int { return reaper.Descendants() }).Should(HaveLen(3)) // quick (or its zombie), slow, sleep

		reaped := map[int]int{}
		Eventually(func() map[int]int {
			reaper.Reap(func(pid int, status unix.WaitStatus) { reaped[pid] = reaper.ExitCode(status) })
			return reaped
		}).Should(Equal(map[int]int{quick.Process.Pid: 3}))
		Expect(reaper.Reap(func(int, unix.WaitStatus) {})).To(BeTrue(), "slow remains")

		sent, refused := reaper.SignalSubtree(unix.SIGKILL, 0, 0, false, true, 0)
		Expect(sent).To(Equal(2))
		Expect(refused).To(BeZero())
		Eventually(func() bool {
			return reaper.Reap(func(pid int, status unix.WaitStatus) { reaped[pid] = reaper.ExitCode(status) })
		}).Should(BeFalse())
		Expect(reaped).To(Equal(map[int]int{quick.Process.Pid: 3, slow.Process.Pid: 137}))
	})
}

func itoa(n int) string { return strconv.Itoa(n) }
