package main

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// initProgram is one init under test and how to start a program through it.
type initProgram struct {
	name string
	path string
	// pid1Args and childArgs give the argv that runs prog through the init when the init is
	// PID 1 of a namespace, and when it is a plain child of the harness.
	pid1Args  func(prog ...string) []string
	childArgs func(prog ...string) []string
	// invocation documents pid1Args and childArgs for the notes.
	invocation string
	version    string
	// waitsOnly marks the Go floor: it runs the program and waits, and neither reaps
	// orphans nor forwards signals, so the reaping and signal phases leave it out.
	waitsOnly bool

	size    int64
	static  bool
	needed  []string
	sha256  string
	realPth string
}

func dashDash(path string, extra ...string) func(prog ...string) []string {
	return func(prog ...string) []string {
		args := append([]string{path}, extra...)
		args = append(args, "--")
		return append(args, prog...)
	}
}

func plain(path string) func(prog ...string) []string {
	return func(prog ...string) []string { return append([]string{path}, prog...) }
}

// goFloorName names the Go floor in the report.
const goFloorName = "go-floor"

// newInits lists the inits under test: ours (when ourPath is not empty), the Go floor (when
// goFloor is not empty) and the Debian peers.
func newInits(ourPath, ourVersion, goFloor, goFloorVersion, tini, tiniStatic, dumbInit, catatonit string, extra []string) ([]*initProgram, error) {
	var inits []*initProgram
	absolute := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	if ourPath != "" {
		ourPath = absolute(ourPath)
		inits = append(inits, &initProgram{
			name: "ours", path: ourPath,
			pid1Args: dashDash(ourPath), childArgs: dashDash(ourPath),
			invocation: "`init -- PROG` (as a child it makes itself a subreaper)",
			version:    ourVersion,
		})
	}
	if goFloor != "" {
		goFloor = absolute(goFloor)
		inits = append(inits, &initProgram{
			name: goFloorName, path: goFloor,
			pid1Args: dashDash(goFloor), childArgs: dashDash(goFloor),
			invocation: "`gofloor -- PROG` (bench/gofloor: fork/exec, wait, exit with the code; no signal handling, no reaping)",
			version:    goFloorVersion,
			waitsOnly:  true,
		})
	}
	inits = append(inits,
		&initProgram{
			name: "tini", path: tini,
			pid1Args: dashDash(tini), childArgs: dashDash(tini, "-s"),
			invocation: "`tini -- PROG`; as a child `tini -s -- PROG` (subreaper)",
		},
		&initProgram{
			name: "tini-static", path: tiniStatic,
			pid1Args: dashDash(tiniStatic), childArgs: dashDash(tiniStatic, "-s"),
			invocation: "`tini-static -- PROG`; as a child `tini-static -s -- PROG` (subreaper)",
		},
		&initProgram{
			name: "dumb-init", path: dumbInit,
			pid1Args: plain(dumbInit), childArgs: plain(dumbInit),
			invocation: "`dumb-init PROG` (default setsid mode: signals go to the child's process group; never a subreaper)",
		},
		&initProgram{
			name: "catatonit", path: catatonit,
			pid1Args: dashDash(catatonit), childArgs: dashDash(catatonit),
			invocation: "`catatonit -- PROG` (as a child it makes itself a subreaper)",
		},
	)
	for _, e := range extra {
		name, path, _ := strings.Cut(e, "=")
		path = absolute(path)
		inits = append(inits, &initProgram{
			name: name, path: path,
			pid1Args: dashDash(path), childArgs: dashDash(path),
			invocation: "`" + name + " -- PROG` (extra build given with -also)",
			version:    path,
		})
	}
	for _, in := range inits {
		if err := in.inspect(); err != nil {
			return nil, err
		}
		switch {
		case in.version != "":
		case in.name == "ours" || in.waitsOnly:
			in.version = "unversioned build"
		default:
			in.version = peerVersion(in.realPth)
		}
	}
	return inits, nil
}

// inspect records the size, linkage, needed shared libraries and digest of the binary.
func (in *initProgram) inspect() error {
	abs, err := filepath.Abs(in.path)
	if err != nil {
		return fmt.Errorf("unable to find %s binary %s: %w", in.name, in.path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("unable to find %s binary %s: %w", in.name, in.path, err)
	}
	in.realPth = real
	in.path = abs
	info, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("unable to stat %s: %w", real, err)
	}
	if info.Mode()&0o111 == 0 {
		return fmt.Errorf("%s binary %s is not executable", in.name, real)
	}
	in.size = info.Size()

	f, err := elf.Open(real)
	if err != nil {
		return fmt.Errorf("unable to read %s as ELF: %w", real, err)
	}
	defer f.Close()
	in.static = true
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			in.static = false
		}
	}
	if !in.static {
		libs, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("unable to read the shared libraries of %s: %w", real, err)
		}
		for _, lib := range libs {
			in.needed = append(in.needed, lib+libSize(lib))
		}
	}

	r, err := os.Open(real)
	if err != nil {
		return fmt.Errorf("unable to open %s: %w", real, err)
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return fmt.Errorf("unable to read %s: %w", real, err)
	}
	in.sha256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// peerVersion names the Debian package and version that installed path, or else asks the
// binary (all three peers answer --version).
func peerVersion(path string) string {
	if out, err := exec.Command("dpkg-query", "-S", path).Output(); err == nil {
		pkg, _, _ := strings.Cut(strings.TrimSpace(string(out)), ":")
		if v, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output(); err == nil && len(v) > 0 {
			return fmt.Sprintf("%s %s (Debian)", pkg, v)
		}
	}
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("unknown (%s --version: %v)", path, err)
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// libSize finds a shared library in the usual directories and returns its size for the
// report, or "" when it is not found there.
func libSize(name string) string {
	for _, dir := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
		real, err := filepath.EvalSymlinks(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if info, err := os.Stat(real); err == nil {
			return fmt.Sprintf(" %.2f MB", float64(info.Size())/1e6)
		}
	}
	return ""
}

// supervisors leaves out the inits that only wait (the Go floor): the phases that need an
// init to reap or to forward signals measure the others.
func supervisors(inits []*initProgram) []*initProgram {
	var out []*initProgram
	for _, in := range inits {
		if !in.waitsOnly {
			out = append(out, in)
		}
	}
	return out
}
