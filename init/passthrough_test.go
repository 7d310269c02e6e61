package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

func testPassthrough(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
		dir        string
		fd3        *os.File
	)

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
		dir = t.TempDir()
		var err error
		fd3, err = os.Create(filepath.Join(dir, "fd3"))
		Expect(err).NotTo(HaveOccurred())
	})

	it.After(func() {
		fd3.Close()
	})

	// through runs program through prefix with SIGHUP, SIGINT, SIGTSTP and
	// SIGTTOU ignored, SIGUSR2 and signal 39 blocked, extra variables, fd 3
	// open and dir as working directory.
	through := func(prefix []string, program ...string) string {
		argv := append([]string{helperBin, "wrap", "1,2,20,22", "12,39", "--"}, prefix...)
		argv = append(argv, program...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "EXTRA=with=equals", "EMPTY=", "BPL_INIT_LOG_LEVEL=error")
		cmd.Dir = dir
		cmd.ExtraFiles = []*os.File{fd3}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred(), stderr.String())
		return string(out)
	}
	asChild := append(initArgv(), "--")
	asPID1 := append([]string{"unshare", "--pid", "--fork", "--mount-proc"}, asChild...)

	it("passes argv, env, cwd and fd 3 through unchanged", func() {
		dump := []string{helperBin, "dump", "", "two words", "--", "-x", "\xff\xfe", "tab\there"}
		direct := through(nil, dump...)
		Expect(direct).To(ContainSubstring(`arg2=""`))
		Expect(direct).To(ContainSubstring(`arg3="two words"`))
		Expect(direct).To(ContainSubstring(`arg6="\xff\xfe"`))
		Expect(direct).To(ContainSubstring(`env="EXTRA=with=equals"`))
		Expect(direct).To(ContainSubstring("fd3=" + fd3.Name()))
		Expect(direct).To(ContainSubstring("cwd=" + dir))

		Expect(through(asChild, dump...)).To(Equal(direct), "as a child subreaper")
		Expect(through(asPID1, dump...)).To(Equal(direct), "as PID 1")
	})

	it("passes ignored signals and the signal mask through unchanged", func() {
		// grep, not a Go program: the Go runtime changes both at start-up.
		grep := []string{"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"}
		direct := through(nil, grep...)
		Expect(direct).To(Equal("SigBlk:\t0000004000000800\nSigIgn:\t0000000000280003\n"))

		Expect(through(asChild, grep...)).To(Equal(direct), "as a child subreaper")
		Expect(through(asPID1, grep...)).To(Equal(direct), "as PID 1")
	})

	it("keeps neither the working directory busy nor the inherited descriptors open itself", func() {
		cmd := command(false, nil, "sleep", "5")
		cmd.Dir = dir
		cmd.ExtraFiles = []*os.File{fd3}
		Expect(cmd.Start()).To(Succeed())
		defer cmd.Process.Kill()
		pid := strconv.Itoa(cmd.Process.Pid)
		Eventually(func() int { return childOf(cmd.Process.Pid) }, 5*time.Second, 10*time.Millisecond).ShouldNot(BeZero())
		Eventually(func() string { l, _ := os.Readlink("/proc/" + pid + "/cwd"); return l }, 5*time.Second, 10*time.Millisecond).Should(Equal("/"))
		Eventually(func() bool { _, err := os.Readlink("/proc/" + pid + "/fd/3"); return os.IsNotExist(err) }, 5*time.Second, 10*time.Millisecond).Should(BeTrue())
		child := strconv.Itoa(childOf(cmd.Process.Pid))
		Expect(os.Readlink("/proc/" + child + "/fd/3")).To(Equal(fd3.Name()))
		Expect(os.Readlink("/proc/" + child + "/cwd")).To(Equal(dir))
	})

	it("passes the BPL_INIT_* variables through too", func() {
		out := through(asChild, helperBin, "dump")
		Expect(strings.Count(out, `env="BPL_INIT_LOG_LEVEL=error"`)).To(Equal(1))
	})

	it("passes the environment block through exactly: duplicate names, empty entries, entries without '='", func() {
		// As execve(2) passes it: a shell reads the last A, getenv(3) the first.
		env := []string{"A=1", "", "NOEQ", "PATH=/usr/bin:/bin", "A=2", "BPL_INIT_LOG_LEVEL=error", "A=3", "=x", "PATH=/nowhere"}
		exact := func(prefix []string, program ...string) string {
			argv := append(append(append(append([]string{helperBin, "exactenv"}, env...), "--"), prefix...), program...)
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
			return string(out)
		}
		block := []string{"/bin/cat", "/proc/self/environ"}
		shell := []string{"/bin/bash", "-c", `echo "A=$A"`}
		Expect(exact(nil, block...)).To(Equal(strings.Join(env, "\x00") + "\x00"))
		Expect(exact(nil, shell...)).To(Equal("A=3\n"))

		unshare, err := exec.LookPath("unshare")
		Expect(err).NotTo(HaveOccurred())
		for name, prefix := range map[string][]string{
			"as a child subreaper": initArgv(),
			"as PID 1":             append([]string{unshare, "--pid", "--fork", "--mount-proc"}, initArgv()...),
		} {
			Expect(exact(prefix, block...)).To(Equal(strings.Join(env, "\x00")+"\x00"), name)
			Expect(exact(prefix, shell...)).To(Equal("A=3\n"), name)
		}
	})
}
