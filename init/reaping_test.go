package main_test

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

func testReaping(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
	)

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
	})

	it("reaps thousands of orphans and leaves no zombie", func() {
		const orphans = 3000
		// The helper starts the orphans and exits without waiting for them;
		// they are reparented to the init, which must reap them all.
		script := `"$0" orphans ` + itoa(orphans) + ` && exec "$0" zombies 20s`
		r := run(t, true, []string{"BPL_INIT_LOG_LEVEL=debug"}, "sh", "-c", script, helperBin)
		Expect(r.Code).To(Equal(0), r.Stdout+r.Stderr[max(0, len(r.Stderr)-2000):])
		Expect(r.Stdout).To(Equal("zombies=0\n"))
		Expect(strings.Count(r.Stderr, "[init] reaped pid ")).To(BeNumerically(">=", orphans))
	})

	it("reaps a process entered with nsenter (docker exec style) whose parent exited", func() {
		cmd, stderr, pid := startPID1(t, []string{"BPL_INIT_LOG_LEVEL=debug"}, "sleep", "30")
		// The shell runs in the namespace as a child of nsenter, outside it;
		// its background sleep is orphaned when the shell exits and falls to
		// the namespace's PID 1.
		out, err := exec.Command("nsenter", "--target", strconv.Itoa(pid), "--pid", "--mount", "--",
			"sh", "-c", "sleep 0.3 & echo $!").Output()
		Expect(err).NotTo(HaveOccurred())
		orphan := strings.TrimSpace(string(out))
		Eventually(stderr.String, 5*time.Second, 10*time.Millisecond).Should(ContainSubstring("[init] reaped pid " + orphan + ", exit code 0"))
		kill(t, pid, syscall.SIGTERM)
		Expect(wait(t, cmd)).To(Equal(128 + 15))
	})

	it("reaps the orphans of a process entered with nsenter after the caller was killed", func() {
		cmd, stderr, pid := startPID1(t, []string{"BPL_INIT_LOG_LEVEL=debug"}, "sleep", "30")
		enter := exec.Command("nsenter", "--target", strconv.Itoa(pid), "--pid", "--mount", "--",
			"sh", "-c", "(sleep 0.5 & echo $!); exec sleep 30")
		stdout, err := enter.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(enter.Start()).To(Succeed())
		buf := make([]byte, 32)
		n, _ := stdout.Read(buf)
		orphan := strings.TrimSpace(string(buf[:n]))
		// The caller (nsenter, outside the namespace) dies; the orphaned
		// sleep inside the namespace is still the init's to reap.
		Expect(enter.Process.Kill()).To(Succeed())
		enter.Wait()
		Eventually(stderr.String, 5*time.Second, 10*time.Millisecond).Should(ContainSubstring("[init] reaped pid " + orphan + ", exit code 0"))
		kill(t, pid, syscall.SIGTERM)
		Expect(wait(t, cmd)).To(Equal(128 + 15))
	})

	it("makes itself a child subreaper when it is not PID 1", func() {
		// The inner shell exits at once; its sleep must be reparented to the
		// init (the outer shell's parent), not to the system's init.
		script := `sh -c 'sleep 2 & echo $! > "$0"' "$0"; sleep 0.3; read p < "$0"; echo "$PPID $(cut -d' ' -f4 /proc/$p/stat)"`
		file := t.TempDir() + "/pid"
		r := run(t, false, []string{"BPL_INIT_GRACE_PERIOD=5"}, "sh", "-c", script, file)
		Expect(r.Code).To(Equal(0), r.Stderr)
		fields := strings.Fields(r.Stdout)
		Expect(fields).To(HaveLen(2))
		Expect(fields[1]).To(Equal(fields[0]), "the orphan's parent is the init")
		Expect(r.Elapsed).To(BeNumerically("<", 2*time.Second), "the orphan got SIGTERM at shutdown")
	})
}
