package main_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

func testBadInput(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		dir    string
		marker string
	)

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
		dir = t.TempDir()
		marker = filepath.Join(dir, "started")
	})

	// A program that would leave a marker if anything were started.
	touch := func() []string { return []string{"sh", "-c", "touch " + marker} }

	it("prints the usage and exits 2 without a program", func() {
		for _, args := range [][]string{{}, {"--"}} {
			r := run(t, true, nil, args...)
			Expect(r.Code).To(Equal(2))
			Expect(r.Stderr).To(Equal("[init] usage: init [--] PROGRAM [ARG...]\n"))
		}
	})

	context("when the program cannot be run", func() {
		it.Before(func() {
			Expect(os.Mkdir(filepath.Join(dir, "a-directory"), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, "not-executable"), []byte("#!/bin/sh\n"), 0o644)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, "bad-interpreter"), []byte("#!/no/such/interpreter\n"), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, "garbage"), []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o755)).To(Succeed())
		})

		for _, c := range []struct {
			name, program, message string
			code                   int
		}{
			{"is not on PATH", "no-such-program", "no-such-program: command not found", 127},
			{"does not exist", "DIR/missing", "DIR/missing: No such file or directory", 127},
			{"is a directory", "DIR/a-directory", "DIR/a-directory: Is a directory", 126},
			{"is not executable", "DIR/not-executable", "DIR/not-executable: Permission denied", 126},
			{"has a missing interpreter", "DIR/bad-interpreter", "DIR/bad-interpreter: bad interpreter: no such file or directory", 127},
			{"is not a valid executable", "DIR/garbage", "DIR/garbage: cannot execute binary file: Exec format error", 126},
		} {
			it("exits "+itoa(c.code)+" with one line naming the path when the program "+c.name, func() {
				program := replaceDir(c.program, dir)
				for _, pid1 := range []bool{true, false} {
					for _, env := range [][]string{nil, {"BPL_INIT_ENABLED=false"}} {
						r := run(t, pid1, env, program, "arg")
						Expect(r.Code).To(Equal(c.code), r.Stderr)
						Expect(r.Stderr).To(Equal("[init] " + replaceDir(c.message, dir) + "\n"))
					}
				}
			})
		}

		it("finds a program on PATH like execvp, skipping non-executable files", func() {
			bin := filepath.Join(dir, "bin")
			Expect(os.Mkdir(bin, 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, "not-executable"), []byte("#!/bin/sh\nexit 1\n"), 0o644)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(bin, "not-executable"), []byte("#!/bin/sh\nexit 42\n"), 0o755)).To(Succeed())
			r := run(t, true, []string{"PATH=" + dir + ":" + bin + ":/usr/bin:/bin"}, "not-executable")
			Expect(r.Code).To(Equal(42), r.Stderr)

			r = run(t, true, []string{"PATH=" + dir}, "not-executable")
			Expect(r.Code).To(Equal(126))
			Expect(r.Stderr).To(Equal("[init] " + dir + "/not-executable: Permission denied\n"))
		})
	})

	context("when a BPL_INIT_* value is bad", func() {
		for _, c := range []struct{ variable, value, accepted string }{
			{"BPL_INIT_ENABLED", "yes", "true or false"},
			{"BPL_INIT_SIGNAL_TARGET", "everyone", "group or child"},
			{"BPL_INIT_GRACE_PERIOD", "-3s", "a non-negative Go duration"},
			{"BPL_INIT_GRACE_PERIOD", "five", "a non-negative Go duration"},
			{"BPL_INIT_SIGNAL_REWRITE", "TERM", "comma-separated FROM:TO signal pairs"},
			{"BPL_INIT_SIGNAL_REWRITE", "KILL:TERM", "comma-separated FROM:TO signal pairs"},
			{"BPL_INIT_SIGNAL_REWRITE", "TERM:NOPE", "comma-separated FROM:TO signal pairs"},
			{"BPL_INIT_SUCCESS_EXIT_CODES", "143,256", "comma-separated exit codes from 0 to 255"},
			{"BPL_INIT_LOG_LEVEL", "verbose", "error, info or debug"},
		} {
			it("refuses to start for "+c.variable+"="+c.value, func() {
				r := run(t, true, []string{c.variable + "=" + c.value}, touch()...)
				Expect(r.Code).To(Equal(2))
				Expect(r.Stderr).To(HavePrefix("[init] invalid " + c.variable + "=\"" + c.value + "\": expected " + c.accepted))
				Expect(r.Stderr).To(HaveSuffix("\n"))
				Expect(r.Stderr[:len(r.Stderr)-1]).NotTo(ContainSubstring("\n"))
				Expect(marker).NotTo(BeAnExistingFile())
			})
		}
	})
}
