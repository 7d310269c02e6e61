package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
)

// The black-box tests run the built init, mostly as PID 1 of a new PID
// namespace. They need root and a few tools; when one is missing every test
// fails and says which, rather than skipping.
//
// INIT_TEST_GOARCH builds the init for another architecture, and
// INIT_TEST_RUNNER (a command and its arguments, split at spaces) runs it:
// INIT_TEST_GOARCH=arm64 INIT_TEST_RUNNER=qemu-aarch64-static runs the suite
// against the arm64 init under qemu-user (see scripts/test.sh for the specs
// that do not apply there). INIT_TEST_BIN runs a given build of the init
// instead, to show that a spec fails on an older one.
var (
	initBin   string
	initComm  = "init" // the init's process name, as /proc shows it
	runner    []string
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
	runner = strings.Fields(os.Getenv("INIT_TEST_RUNNER"))
	tools := []string{"unshare", "nsenter", "script", "strace", "setpriv", "bash", "sh", "sleep", "true"}
	if len(runner) > 0 {
		tools = append(tools, runner[0])
		initComm = filepath.Base(runner[0])[:min(15, len(filepath.Base(runner[0])))]
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("the init's black-box tests need %s on PATH: %w", tool, err)
		}
	}
	if len(runner) > 0 {
		runner[0], _ = exec.LookPath(runner[0]) // specs change PATH
	}
	// The init also runs as uid 1000 (see leftovers_test.go).
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	initBin = filepath.Join(dir, "init")
	helperBin = filepath.Join(dir, "testhelper")
	builds := [][]string{{"build", "-o", helperBin, "./internal/testhelper"}}
	goarch := ""
	if bin := os.Getenv("INIT_TEST_BIN"); bin != "" {
		initBin, initComm = bin, filepath.Base(bin)
	} else {
		builds = append(builds, []string{"build", "-trimpath", "-ldflags=-s -w", "-o", initBin, "."})
		goarch = os.Getenv("INIT_TEST_GOARCH")
	}
	for i, args := range builds {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if i > 0 && goarch != "" {
			cmd.Env = append(cmd.Env, "GOARCH="+goarch)
		}
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
	suite("Leftovers", testLeftovers)
	suite("Subreaper", testSubreaper)
	suite("Passthrough", testPassthrough)
	suite("Terminal", testTerminal)
	suite("Stderr", testStderr)
	suite.Run(t)
}
