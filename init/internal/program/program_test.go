package program_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/program"
)

func TestProgram(t *testing.T) {
	spec.Run(t, "Program", testProgram, spec.Report(report.Terminal{}))
}

func testProgram(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		dir    string
	)

	it.Before(func() {
		dir = t.TempDir()
		for _, d := range []string{"a", "b", "b/dir"} {
			Expect(os.MkdirAll(filepath.Join(dir, d), 0o755)).To(Succeed())
		}
		Expect(os.WriteFile(filepath.Join(dir, "a", "prog"), nil, 0o644)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "b", "prog"), nil, 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "a", "only-a"), nil, 0o644)).To(Succeed())
	})

	lookErr := func(name, path string) (string, int) {
		_, err := program.LookPath(name, path, true)
		Expect(err).To(HaveOccurred())
		perr := err.(*program.Error)
		return perr.Error(), perr.Code
	}

	it("uses a name with a slash as it is", func() {
		Expect(program.LookPath(filepath.Join(dir, "b", "prog"), "", true)).To(Equal(filepath.Join(dir, "b", "prog")))
	})

	it("searches PATH in order and skips non-executable files", func() {
		path := filepath.Join(dir, "a") + ":" + filepath.Join(dir, "b")
		Expect(program.LookPath("prog", path, true)).To(Equal(filepath.Join(dir, "b", "prog")))
	})

	it("skips directories on PATH, reporting one with 126 like execvp when nothing else is found", func() {
		msg, code := lookErr("dir", filepath.Join(dir, "b"))
		Expect(msg).To(Equal(filepath.Join(dir, "b", "dir") + ": Is a directory"))
		Expect(code).To(Equal(126))
	})

	it("reports the first non-executable candidate with 126 when nothing else is found", func() {
		msg, code := lookErr("only-a", filepath.Join(dir, "a")+":"+filepath.Join(dir, "b"))
		Expect(msg).To(Equal(filepath.Join(dir, "a", "only-a") + ": Permission denied"))
		Expect(code).To(Equal(126))
	})

	it("reports 127 when the name is nowhere", func() {
		msg, code := lookErr("missing", filepath.Join(dir, "a"))
		Expect(msg).To(Equal("missing: command not found"))
		Expect(code).To(Equal(127))
		_, code = lookErr("", "/bin")
		Expect(code).To(Equal(127))
	})

	it("treats an empty PATH entry as the working directory and uses /bin:/usr/bin when PATH is unset", func() {
		t.Chdir(filepath.Join(dir, "b"))
		Expect(program.LookPath("prog", ":/nonexistent", true)).To(Equal("./prog"))
		Expect(program.LookPath("sh", "", false)).To(Equal("/bin/sh"))
	})

	context("ExecError", func() {
		for _, c := range []struct {
			name   string
			errno  unix.Errno
			exists bool
			reason string
			code   int
		}{
			{"a missing file", unix.ENOENT, false, "No such file or directory", 127},
			{"an existing file whose interpreter is missing", unix.ENOENT, true, "bad interpreter: no such file or directory", 127},
			{"a file without execute permission", unix.EACCES, true, "Permission denied", 126},
			{"a file of unknown format", unix.ENOEXEC, true, "cannot execute binary file: Exec format error", 126},
			{"any other error", unix.ETXTBSY, true, "text file busy", 126},
		} {
			it("maps "+c.name, func() {
				path := filepath.Join(dir, "missing")
				if c.exists {
					path = filepath.Join(dir, "b", "prog")
				}
				err := program.ExecError(path, c.errno).(*program.Error)
				Expect(err.Error()).To(Equal(path + ": " + c.reason))
				Expect(err.Code).To(Equal(c.code))
			})
		}
	})
}
