package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// The init when it is not PID 1: a child subreaper, or, where the kernel
// (or qemu-user) refuses, neither.
func testSubreaper(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
		dir        string
	)

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
		dir = t.TempDir()
	})

	it("says once that it is no subreaper when it cannot be one, and still ends the program's orphans", func() {
		// The helper makes prctl(PR_SET_CHILD_SUBREAPER) fail with EINVAL,
		// as qemu-user does.
		cmd := commandVia([]string{helperBin, "nosubreaper"}, false, []string{"BPL_INIT_LOG_LEVEL=info", "BPL_INIT_GRACE_PERIOD=3s"},
			"sh", "-c", "sleep 30 & echo $!; exit 0")
		var stdout bytes.Buffer
		var stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		Expect(cmd.Start()).To(Succeed())
		code, elapsed := waitAtMost(t, cmd, 20*time.Second)
		Expect(code).To(Equal(0), stderr.String())
		Expect(strings.Count(stderr.String(), "[init] warning: not a child subreaper (invalid argument): "+
			"orphans of the program's subtree go to the reaper above the init")).To(Equal(1), stderr.String())
		Expect(stderr.String()).To(ContainSubstring("(init is neither PID 1 nor a child subreaper)"))
		Expect(stderr.String()).NotTo(ContainSubstring("(init is a child subreaper)"))
		Expect(elapsed).To(BeNumerically("<", 3*time.Second), "the orphan died of SIGTERM, the grace period did not run out")

		orphan, err := strconv.Atoi(strings.TrimSpace(stdout.String()))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() string { s, _ := stat(orphan); return s }, 5*time.Second, 10*time.Millisecond).Should(BeElementOf("", "Z"),
			"the program's orphan (pid %d) was ended", orphan)
	})

	it("never signals a process that took the pid of a descendant after the descendant was found", func() {
		// P, the program's child, outlives the program with its child G.
		// At shutdown the init finds P and G; strace holds each of its
		// signals 1.5 s. SIGTERM makes P end G and reap it; meanwhile the
		// namespace's PID 1, outside the init's subtree, starts an outsider
		// with G's pid (ns_last_pid). The signal meant for G must not reach it.
		files := map[string]string{
			"G.sh": `echo $$ > "$D/g.tmp" && mv "$D/g.tmp" "$D/g"; read x < "$D/fifo"`,
			"P.sh": `sh "$D/G.sh" & trap 'echo go > "$D/fifo"; wait; exit 0' TERM; wait`,
			"outer.sh": `"$@" & init=$!
while [ ! -s "$D/g" ]; do sleep 0.01; done
g=$(cat "$D/g")
while [ -e /proc/$g ]; do sleep 0.01; done
i=0
while :; do
  echo $((g - 1)) > /proc/sys/kernel/ns_last_pid
  sleep 30 & o=$!
  [ "$o" = "$g" ] && break
  kill $o; i=$((i + 1))
  [ $i -lt 50 ] || { echo "could not start a process with pid $g"; exit 99; }
done
wait $init; code=$?
state=$(cut -d' ' -f3 /proc/$o/stat 2>/dev/null)
echo "outsider ${state:-killed and reaped}"
exit $code`,
		}
		for name, content := range files {
			Expect(os.WriteFile(filepath.Join(dir, name), []byte(content+"\n"), 0o755)).To(Succeed())
		}
		Expect(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600)).To(Succeed())
		program := `sh "$D/P.sh" & while [ ! -s "$D/g" ]; do sleep 0.01; done`
		argv := append([]string{"unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", filepath.Join(dir, "outer.sh"),
			"strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=kill,pidfd_send_signal",
			"-e", "inject=kill,pidfd_send_signal:delay_enter=1500000"}, initArgv()...)
		cmd := exec.Command(argv[0], append(argv[1:], "sh", "-c", program)...)
		cmd.Env = append(os.Environ(), "D="+dir, "BPL_INIT_GRACE_PERIOD=5s")
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		Expect(cmd.Start()).To(Succeed())
		code, _ := waitAtMost(t, cmd, 40*time.Second)
		Expect(code).To(Equal(0), out.String())
		Expect(out.String()).To(ContainSubstring("outsider S\n"), "the outsider was not signalled")
	})

	// inNamespace runs the init as a child subreaper under a shell that is
	// PID 1 of a new PID namespace, after setup (shell words), so that what
	// the init leaves dies with the namespace, and returns how it ended.
	inNamespace := func(unshare []string, setup string, prefix []string, env []string, program string) (int, time.Duration, string) {
		argv := append(append(append(append([]string{"unshare", "--pid", "--fork", "--kill-child"}, unshare...),
			"sh", "-c", setup+`; "$@"; exit $?`, "sh"), prefix...), initArgv()...)
		cmd := exec.Command(argv[0], append(argv[1:], "sh", "-c", program)...)
		cmd.Env = append(os.Environ(), env...)
		var stderr syncBuffer
		cmd.Stderr = &stderr
		Expect(cmd.Start()).To(Succeed())
		code, elapsed := waitAtMost(t, cmd, 20*time.Second)
		return code, elapsed, stderr.String()
	}
	// straggler outlives the program, notes in $NOTE that SIGTERM came,
	// then exits.
	const straggler = `sh -c 'trap "echo TERM > \"\$NOTE\"; exit 0" TERM; while :; do sleep 0.05; done' & sleep 0.3; exit 3`

	it("signals its descendants with kill(2) when a seccomp profile refuses pidfd_send_signal with EPERM", func() {
		note := filepath.Join(dir, "note")
		code, elapsed, stderr := inNamespace([]string{"--mount-proc"}, ":", []string{helperBin, "nopidfdsignal"},
			[]string{"NOTE=" + note, "BPL_INIT_LOG_LEVEL=info", "BPL_INIT_GRACE_PERIOD=5s"}, straggler)
		Expect(code).To(Equal(3), stderr)
		Expect(stderr).To(ContainSubstring("(init is a child subreaper)"))
		Expect(stderr).To(MatchRegexp(`\[init\] sent SIGTERM to the init's [1-9]\d* remaining descendants\n`))
		Expect(stderr).NotTo(ContainSubstring("another user's"))
		Expect(readFile(note)).To(Equal("TERM\n"), stderr)
		Expect(elapsed).To(BeNumerically("<", 3*time.Second), "the straggler died of SIGTERM, the grace period did not run out:\n"+stderr)
	})

	it("ends the program's process group when no proc file system shows its descendants, as a child subreaper", func() {
		note := filepath.Join(dir, "note")
		code, elapsed, stderr := inNamespace([]string{"--mount"}, "umount -l /proc", nil,
			[]string{"NOTE=" + note, "BPL_INIT_LOG_LEVEL=info", "BPL_INIT_GRACE_PERIOD=5s"}, straggler)
		Expect(code).To(Equal(3), stderr)
		Expect(stderr).To(ContainSubstring("(init is a child subreaper)"))
		Expect(stderr).To(ContainSubstring("[init] sent SIGTERM to the program's process group (no /proc to find the init's descendants in)\n"))
		Expect(readFile(note)).To(Equal("TERM\n"), stderr)
		Expect(elapsed).To(BeNumerically("<", 3*time.Second), "the straggler died of SIGTERM, the grace period did not run out:\n"+stderr)
	})
}
