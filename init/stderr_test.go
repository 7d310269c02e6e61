package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// The init's own standard error: a reader that went away or that stalls
// must change nothing for the program.
func testStderr(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		dir    string
	)

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
		dir = t.TempDir()
	})

	// withClosedStderr runs the init with the log level and a program that
	// writes "ok" to a file after 1 s, with standard error the write end of
	// a pipe whose reader is gone (`init ... 2>&1 | true`). The program must
	// finish as it would without the init.
	withClosedStderr := func(pid1 bool, level, program string) *exec.Cmd {
		r, w, err := os.Pipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Close()).To(Succeed())
		defer w.Close()
		file := filepath.Join(dir, "f")
		cmd := command(pid1, []string{"BPL_INIT_LOG_LEVEL=" + level}, "sh", "-c", program+"; sleep 1; echo ok > "+file)
		cmd.Stderr = w
		Expect(cmd.Start()).To(Succeed())
		code, _ := waitAtMost(t, cmd, 20*time.Second)
		Expect(code).To(Equal(0), "without the init the program exits 0")
		Expect(readFile(file)).To(Equal("ok\n"))
		return cmd
	}

	for _, pid1 := range []bool{false, true} {
		name := "as a child"
		if pid1 {
			name = "as PID 1"
		}
		it("does not forward the SIGPIPE its own log write raises, "+name, func() {
			withClosedStderr(pid1, "info", ":")
		})
	}

	for _, pid1 := range []bool{false, true} {
		name := "as a child"
		if pid1 {
			name = "as PID 1"
		}
		it("does not forward the SIGXFSZ its own log write past RLIMIT_FSIZE raises, "+name, func() {
			// The debug log of 200 reaped orphans is far more than 2,000
			// bytes; the program's own write, 3 bytes, is within them.
			log := filepath.Join(dir, "log")
			stderr, err := os.Create(log)
			Expect(err).NotTo(HaveOccurred())
			defer stderr.Close()
			file := filepath.Join(dir, "f")
			program := `"$0" orphans 200; sleep 0.5; echo ok > ` + file
			cmd := command(pid1, []string{"BPL_INIT_LOG_LEVEL=debug"}, "sh", "-c", program, helperBin)
			cmd.Args = append([]string{"prlimit", "--fsize=2000"}, cmd.Args...)
			cmd.Path, err = exec.LookPath("prlimit")
			Expect(err).NotTo(HaveOccurred())
			cmd.Stderr = stderr
			Expect(cmd.Start()).To(Succeed())
			code, _ := waitAtMost(t, cmd, 20*time.Second)
			Expect(code).To(Equal(0), "without the init the program exits 0; the init's log:\n%s", readFile(log))
			Expect(readFile(file)).To(Equal("ok\n"))
			Expect(len(readFile(log))).To(BeNumerically(">", 1000), "the log reached the limit")
		})
	}

	it("does not loop on failed log writes at debug level when the program ignores SIGPIPE", func() {
		cmd := withClosedStderr(false, "debug", "trap '' PIPE")
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		Expect(cpu).To(BeNumerically("<", 300*time.Millisecond), "CPU time of the init while its program slept 1 s")
	})

	it("reaps and exits while standard error is a pipe nobody reads", func() {
		// 3,000 "reaped" lines at debug level are far more than a pipe
		// holds (64 KiB).
		r, w, err := os.Pipe()
		Expect(err).NotTo(HaveOccurred())
		defer r.Close()
		defer w.Close()
		script := `"$0" orphans 3000 && exec "$0" zombies 10s`
		cmd := command(true, []string{"BPL_INIT_LOG_LEVEL=debug"}, "sh", "-c", script, helperBin)
		var stdout bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, w
		Expect(cmd.Start()).To(Succeed())
		code, elapsed := waitAtMost(t, cmd, 30*time.Second)
		Expect(stdout.String()).To(Equal("zombies=0\n"))
		Expect(code).To(Equal(0))
		Expect(elapsed).To(BeNumerically("<", 10*time.Second))
	})
}
