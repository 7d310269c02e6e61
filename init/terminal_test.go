package main_test

import (
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
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
		// script(1) runs the init on a new pseudo-terminal whose input is
		// what the test writes.
		cmd := exec.Command("script", "-qfec", initLine()+" -- "+helperBin+" tty", "/dev/null")
		stdin, err := cmd.StdinPipe()
		Expect(err).NotTo(HaveOccurred())
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		Expect(cmd.Start()).To(Succeed())
		defer cmd.Process.Kill()

		report := regexp.MustCompile(`tty pid=(\d+) ppid=(\d+) pgrp=(\d+) fg=(\d+)`)
		Eventually(out.String, 5*time.Second, 5*time.Millisecond).Should(MatchRegexp(report.String()))
		m := report.FindStringSubmatch(out.String())
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

		write("\x1a")
		Eventually(func() string { s, _ := stat(program); return s }, 5*time.Second, 5*time.Millisecond).Should(Equal("T"), "Ctrl-Z stops the program")
		state, _ := stat(init)
		Expect(state).To(Equal("S"), "the init is not stopped")

		kill(t, init, syscall.SIGCONT)
		Eventually(func() string { s, _ := stat(program); return s }, 5*time.Second, 5*time.Millisecond).ShouldNot(Equal("T"), "SIGCONT to the init resumes the program")

		write("q\n")
		err = cmd.Wait()
		Expect(cmd.ProcessState.ExitCode()).To(Equal(5), fmt.Sprint(err, out.String()))
		Expect(out.String()).To(ContainSubstring("bye"))
	})
}
