package main_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

func testTerminal(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
	)

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
	})

	it("gives the program the terminal: Ctrl-C and Ctrl-Z reach it, the init is never stopped", func() {
		cmd, stdin, out := onTerminal(t, "BPL_INIT_LOG_LEVEL=info "+initLine()+" -- "+helperBin+" tty")
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(MatchRegexp(ttyReport.String()))
		m := ttyReport.FindStringSubmatch(out.String())
		program, _ := strconv.Atoi(m[1])
		init, _ := strconv.Atoi(m[2])
		Expect(m[3]).To(Equal(m[1]), "the program leads its own process group")
		Expect(m[4]).To(Equal(m[1]), "the program's group is the terminal's foreground group")
		Expect(comm(init)).To(Equal(initComm))

		write := func(s string) {
			_, err := io.WriteString(stdin, s)
			Expect(err).NotTo(HaveOccurred())
		}

		write("\x03")
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("got SIGINT"))

		// Nobody above the init does job control (script's shell is no
		// interactive shell): the init continues the program Ctrl-Z stopped.
		write("\x1a")
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("[init] continued the program, stopped by SIGTSTP: nobody above the init does job control"))
		state, _ := stat(init)
		Expect(state).NotTo(Equal("T"), "the init is not stopped")

		kill(t, init, syscall.SIGCONT)
		Eventually(func() string { s, _ := stat(program); return s }, 5*time.Second, 5*time.Millisecond).ShouldNot(Equal("T"), "SIGCONT to the init resumes the program")

		write("q\n")
		err := cmd.Wait()
		Expect(cmd.ProcessState.ExitCode()).To(Equal(5), fmt.Sprint(err, out.String()))
		Expect(out.String()).To(ContainSubstring("bye"))
	})

	// ownsTerminal waits for the helper's report and says whether its
	// process group is the terminal's foreground group.
	ownsTerminal := func(out *syncBuffer) bool {
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(MatchRegexp(ttyReport.String()))
		m := ttyReport.FindStringSubmatch(out.String())
		return m[3] == m[4]
	}

	for _, c := range []struct{ name, first string }{
		{"its program exits", "true"},
		{"its program cannot be executed", "DIR/bad-interpreter"},
	} {
		it("gives the terminal back to its own group when "+c.name+", so the next command of the shell gets it", func() {
			dir := t.TempDir()
			Expect(os.WriteFile(filepath.Join(dir, "bad-interpreter"), []byte("#!/no/such/interpreter\n"), 0o755)).To(Succeed())
			first := initLine() + " -- " + replaceDir(c.first, dir)
			cmd, stdin, out := onTerminal(t, "sh -c '"+first+"; "+initLine()+" -- "+helperBin+" tty'")
			Expect(ownsTerminal(out)).To(BeTrue(), "the second program's group is the foreground group:\n"+out.String())
			_, err := io.WriteString(stdin, "q\n")
			Expect(err).NotTo(HaveOccurred())
			Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("bye"), "the second program read its line")
			Expect(cmd.Wait()).To(HaveOccurred())
			Expect(cmd.ProcessState.ExitCode()).To(Equal(5))
		})
	}

	it("hands the terminal to the program when a shell brings the init to the foreground", func() {
		cmd, write, out := atPrompt(t)
		write(initLine() + " -- " + helperBin + " tty &\n")
		Expect(ownsTerminal(out)).To(BeFalse(), "started in the background:\n"+out.String())
		write("fg\n")
		time.Sleep(300 * time.Millisecond)
		write("q\n")
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("bye"), "the program read its line after fg")
		write("echo status=$?\n")
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("status=5"))
		write("exit\n")
		cmd.Wait()
	})

	it("stops once on Ctrl-Z after a shell brought it to the foreground, and fg continues it for good", func() {
		cmd, write, out := atPrompt(t)
		write(initLine() + " -- " + helperBin + " tty &\n")
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(MatchRegexp(ttyReport.String()))
		write("fg\n")
		time.Sleep(300 * time.Millisecond)
		write("\x1a")
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("Stopped"), "the shell saw its job stopped:\n%s", out.String())
		write("fg\n")
		time.Sleep(500 * time.Millisecond)
		Expect(strings.Count(out.String(), "Stopped")).To(Equal(1), "stopped once:\n%s", out.String())
		write("q\n")
		write("echo status=$?\n")
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("status=5"), "the program read its line after fg:\n%s", out.String())
		write("exit\n")
		waitAtMost(t, cmd, 5*time.Second)
	})

	it("is stopped by Ctrl-Z with its program, as they are without the init, when a job-control shell runs it inside a job (bash -c 'init -- prog' at a prompt); fg continues both", func() {
		for _, prefix := range []string{"", initLine() + " -- "} {
			cmd, write, out := atPrompt(t)
			write("bash -c '" + prefix + helperBin + " tty; echo done=$?'\n")
			Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(MatchRegexp(ttyReport.String()), prefix)
			interruptStopContinue(t, write, out, prefix)
			Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("done=5"), "%q: the program read its line after fg:\n%s", prefix, out.String())
			Expect(strings.Count(out.String(), "got SIGINT")).To(Equal(1), "%q: Ctrl-C reached the program once:\n%s", prefix, out.String())
			write("exit\n")
			waitAtMost(t, cmd, 5*time.Second)
		}
	})

	it("is stopped by Ctrl-Z with its program when typed at a prompt (init -- prog), as the program is without the init; fg hands the program the terminal again", func() {
		for _, prefix := range []string{"", initLine() + " -- "} {
			cmd, write, out := atPrompt(t)
			write(prefix + helperBin + " tty\n")
			Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(MatchRegexp(ttyReport.String()), prefix)
			interruptStopContinue(t, write, out, prefix)
			write("echo status=$?\n")
			Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("status=5"), "%q: the program read its line after fg:\n%s", prefix, out.String())
			Expect(strings.Count(out.String(), "got SIGINT")).To(Equal(1), "%q: Ctrl-C reached the program once:\n%s", prefix, out.String())
			Expect(strings.Count(out.String(), "Stopped")).To(Equal(1), "%q: stopped once:\n%s", prefix, out.String())
			write("exit\n")
			waitAtMost(t, cmd, 5*time.Second)
		}
	})

	it("leaves a program that moved to a group of its own stopped when it reads the terminal from there, as without the init (bash -c 'init -- prog' at a prompt), instead of continuing it over and over", func() {
		for _, prefix := range []string{"", initLine() + " -- "} {
			cmd, write, out := atPrompt(t)
			write("bash -c '" + prefix + helperBin + " leavegroup; echo done=$?'\n")
			report := regexp.MustCompile(`leavegroup pid=(\d+)`)
			Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(MatchRegexp(report.String()), prefix)
			program, _ := strconv.Atoi(report.FindStringSubmatch(out.String())[1])
			Eventually(func() string { s, _ := stat(program); return s }, 5*time.Second, 5*time.Millisecond).Should(Equal("T"), "%q: SIGTTIN stopped the program", prefix)
			before := contextSwitches(program)
			time.Sleep(500 * time.Millisecond)
			state, _ := stat(program)
			Expect(state).To(Equal("T"), "%q: the program is still stopped", prefix)
			Expect(contextSwitches(program)-before).To(BeNumerically("<", 3), "%q: nobody continued the program meanwhile (its threads' context switches)", prefix)
			kill(t, program, syscall.SIGKILL)
			Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("done=137"), "%q:\n%s", prefix, out.String())
			write("exit\n")
			waitAtMost(t, cmd, 5*time.Second)
		}
	})

	it("writes its log lines and is never stopped when the terminal has tostop set", func() {
		cmd, stdin, out := onTerminal(t, "stty tostop; BPL_INIT_LOG_LEVEL=info "+initLine()+" -- "+helperBin+" tty")
		Expect(ownsTerminal(out)).To(BeTrue())
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(MatchRegexp(`\[init\] started \S+ as pid \d+ \(init is [^)]+\), its process group owns the terminal`))
		_, err := io.WriteString(stdin, "q\n")
		Expect(err).NotTo(HaveOccurred())
		Expect(cmd.Wait()).To(HaveOccurred())
		Expect(cmd.ProcessState.ExitCode()).To(Equal(5), out.String())
		Expect(out.String()).To(ContainSubstring("[init] program exited: exit code 5"))
	})

	for _, c := range []struct {
		name, env, line string
		code            int
	}{
		{"the line before it executes the program in its place", "BPL_INIT_ENABLED=false BPL_INIT_LOG_LEVEL=info",
			"[init] disabled by BPL_INIT_ENABLED=false, executing ", 0},
		{"its error", "BPL_INIT_GRACE_PERIOD=abc", `[init] invalid BPL_INIT_GRACE_PERIOD="abc"`, 2},
	} {
		it("writes "+c.name+" and is not stopped in the background when the terminal has tostop set", func() {
			// Without the init the program would run in the background: it
			// does not write to the terminal. A job that stops instead makes
			// wait return 128+SIGTTOU.
			note := filepath.Join(t.TempDir(), "ran")
			cmd, stdin, out := onTerminal(t, "bash --norc --noprofile -i")
			_, err := io.WriteString(stdin, "stty tostop\n"+c.env+" "+initLine()+" -- sh -c 'echo ran > "+note+"' &\n"+
				"wait $!; echo status=$?\n")
			Expect(err).NotTo(HaveOccurred())
			Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(MatchRegexp(`status=\d+`))
			Expect(out.String()).To(ContainSubstring("status="+strconv.Itoa(c.code)+"\r\n"), "not stopped (150):\n%s", out.String())
			Expect(out.String()).To(ContainSubstring(c.line))
			if c.code == 0 {
				Expect(readFile(note)).To(Equal("ran\n"))
			}
			io.WriteString(stdin, "kill -9 %1 2>/dev/null; exit\n")
			cmd.Wait()
		})
	}
}

// ttyReport is the line the helper's tty mode starts with.
var ttyReport = regexp.MustCompile(`tty pid=(\d+) ppid=(\d+) pgrp=(\d+) fg=(\d+)`)

// interruptStopContinue types Ctrl-C (the tty helper handles SIGINT: it
// says so), Ctrl-Z, waits for the shell to say the job stopped, types fg
// and then the line that ends the helper (exit code 5). prefix names the
// run in failures.
func interruptStopContinue(t *testing.T, write func(string), out *syncBuffer, prefix string) {
	Eventually := NewWithT(t).Eventually
	write("\x03")
	Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("got SIGINT"), prefix)
	write("\x1a")
	Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(ContainSubstring("Stopped"), "%q: the shell saw its job stopped:\n%s", prefix, out.String())
	write("fg\n")
	time.Sleep(300 * time.Millisecond)
	write("q\n")
}

// atPrompt starts an interactive bash on a new terminal (see onTerminal)
// and returns it, a function that types at it, and what the terminal shows.
func atPrompt(t *testing.T) (*exec.Cmd, func(string), *syncBuffer) {
	cmd, stdin, out := onTerminal(t, "bash --norc --noprofile -i")
	return cmd, func(s string) {
		_, err := io.WriteString(stdin, s)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
	}, out
}

// onTerminal runs a shell line with script(1) on a new pseudo-terminal whose
// input is what the test writes to stdin.
func onTerminal(t *testing.T, line string) (*exec.Cmd, io.Writer, *syncBuffer) {
	g := NewWithT(t)
	cmd := exec.Command("script", "-qfec", line, "/dev/null")
	stdin, err := cmd.StdinPipe()
	g.Expect(err).NotTo(HaveOccurred())
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	g.Expect(cmd.Start()).To(Succeed())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, stdin, &out
}
