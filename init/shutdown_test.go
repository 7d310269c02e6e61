package main_test

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

func testShutdown(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		dir    string
	)

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
		dir = t.TempDir()
	})

	// Two stragglers outlive the program: one exits on SIGTERM and notes it,
	// the other ignores SIGTERM and has to be killed.
	stragglers := func(note string) string {
		return `sh -c 'trap "echo TERM > ` + note + `; exit 0" TERM; while :; do sleep 0.05; done' &
sh -c "trap '' TERM; exec sleep 30" &
sleep 0.3; exit 3`
	}

	for _, pid1 := range []bool{true, false} {
		name := "as PID 1"
		if !pid1 {
			name = "as a child subreaper"
		}
		it("sends stragglers SIGTERM, then SIGKILL after the grace period, "+name, func() {
			note := filepath.Join(dir, "note")
			r := run(t, pid1, []string{"BPL_INIT_GRACE_PERIOD=1s", "BPL_INIT_LOG_LEVEL=info"}, "sh", "-c", stragglers(note))
			Expect(r.Code).To(Equal(3), r.Stderr)
			Expect(readFile(note)).To(Equal("TERM\n"))
			Expect(r.Elapsed).To(BeNumerically(">=", 1300*time.Millisecond))
			Expect(r.Elapsed).To(BeNumerically("<", 3*time.Second))
			if pid1 {
				Expect(r.Stderr).To(ContainSubstring("[init] sent SIGTERM to every other process of the PID namespace\n"))
				Expect(r.Stderr).To(ContainSubstring("[init] sent SIGKILL to every other process of the PID namespace\n"))
			} else {
				Expect(r.Stderr).To(MatchRegexp(`\[init\] sent SIGTERM to the init's [1-9]\d* remaining descendants\n`))
				Expect(r.Stderr).To(MatchRegexp(`\[init\] sent SIGKILL to the init's [1-9]\d* remaining descendants\n`))
			}
			Expect(r.Stderr).To(ContainSubstring("[init] waiting up to 1s for the remaining processes\n"))
		})

		it("sends a straggler in the program's process group SIGTERM once, "+name, func() {
			// The helper notes each SIGTERM it is delivered and exits half a
			// second after the first: a second one, sent by a walk of /proc
			// after the group was signalled, would be noted too.
			note := filepath.Join(dir, "terms")
			program := `"$0" terms "$1" & while ! grep -q ready "$1" 2>/dev/null; do sleep 0.01; done; exit 0`
			r := run(t, pid1, []string{"BPL_INIT_GRACE_PERIOD=5s"}, "sh", "-c", program, helperBin, note)
			Expect(r.Code).To(Equal(0), r.Stderr)
			Expect(readFile(note)).To(MatchRegexp(`^ready \d+\n15\n$`), "SIGTERM delivered once")
			Expect(r.Elapsed).To(BeNumerically("<", 3*time.Second), "the straggler exited on SIGTERM")
		})
	}

	it("never signals processes outside its subtree as a child subreaper", func() {
		outsider := exec.Command("sleep", "30")
		Expect(outsider.Start()).To(Succeed())
		defer outsider.Process.Kill()
		r := run(t, false, []string{"BPL_INIT_GRACE_PERIOD=0"}, "sh", "-c", "sleep 30 & exit 0")
		Expect(r.Code).To(Equal(0))
		Expect(outsider.Process.Signal(syscall.Signal(0))).To(Succeed(), "the outsider is still alive")
		state, _ := stat(outsider.Process.Pid)
		Expect(state).To(Equal("S"))
	})

	it("continues a stopped straggler after SIGTERM so that it can act on it", func() {
		r := run(t, true, []string{"BPL_INIT_GRACE_PERIOD=10s"}, "sh", "-c", `sh -c 'kill -STOP $$; sleep 30' & sleep 0.3; exit 4`)
		Expect(r.Code).To(Equal(4))
		Expect(r.Elapsed).To(BeNumerically("<", 3*time.Second), "the straggler died of SIGTERM, not of SIGKILL after 10s")
	})

	it("exits at once when nothing remains after the program", func() {
		r := run(t, true, []string{"BPL_INIT_GRACE_PERIOD=10s"}, "sh", "-c", "exit 0")
		Expect(r.Code).To(Equal(0))
		Expect(r.Elapsed).To(BeNumerically("<", 2*time.Second))
	})
}
