package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
)

// The black-box tests run the built init, mostly as PID 1 of a new PID
// namespace. They need root and a few tools; when one is missing every test
// fails and says which, rather than skipping.
var (
	initBin   string
	helperBin string
	setupErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "init-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	setupErr = setUp(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func setUp(dir string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("the init's black-box tests must run as root (PID namespaces, nsenter), running as uid %d", os.Geteuid())
	}
	for _, tool := range []string{"unshare", "nsenter", "script", "strace", "sh", "sleep", "true"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("the init's black-box tests need %s on PATH: %w", tool, err)
		}
	}
	initBin = filepath.Join(dir, "init")
	helperBin = filepath.Join(dir, "testhelper")
	builds := [][]string{
		{"build", "-trimpath", "-ldflags=-s -w", "-o", initBin, "."},
		{"build", "-o", helperBin, "./internal/testhelper"},
	}
	for _, args := range builds {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("unable to go %v: %w\n%s", args, err, out)
		}
	}
	return nil
}

func TestInit(t *testing.T) {
	suite := spec.New("init", spec.Report(report.Terminal{}))
	suite("BadInput", testBadInput)
	suite("ExitCodes", testExitCodes)
	suite("Signals", testSignals)
	suite("Reaping", testReaping)
	suite("Shutdown", testShutdown)
	suite("Passthrough", testPassthrough)
	suite("Terminal", testTerminal)
	suite.Run(t)
}
