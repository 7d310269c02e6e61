package rewrite_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/rewrite"
)

// run executes argv (argv[0] is looked up like the init does) in dir and returns stdout and the
// exit code.
func run(t *testing.T, path string, argv []string, dir string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := &exec.Cmd{Path: path, Args: argv, Dir: dir, Stdout: &stdout, Stderr: &stderr,
		Env: []string{"PATH=/usr/bin:/bin", "GREETING=hello there", "HOME=/home/app", "PORT=8080"}}
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), exit.ExitCode()
	default:
		t.Fatalf("unable to run %v: %s", argv, err)
		return "", -1
	}
}

func testShellScript(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	it.Before(func() {
		if _, err := os.Stat(rewrite.Bash); err != nil {
			t.Fatalf("these tests need %s, as the run image of an API 0.8 shell process does: %s", rewrite.Bash, err)
		}
	})

	// wantOut and wantCode are what the launcher's own invocation prints and exits with; the
	// wrapped invocation must do the same.
	type shellCase struct {
		name     string
		command  string
		args     []string
		user     []string
		wantOut  string
		wantCode int
	}
	for _, tc := range []shellCase{
		{name: "a script without arguments", command: `echo "$GREETING"; echo second line`, wantOut: "hello there\nsecond line\n"},
		{name: "a script using $0 and a failing exit code", command: `echo "[$0]"; exit 3`, wantOut: "[bash]\n", wantCode: 3},
		{name: "an empty command line", command: ``, wantOut: ""},
		{name: "a command with process arguments", command: `printf`, args: []string{`<%s>`, `a b`, `$GREETING`, `$(echo sub)`}, wantOut: "<a b><hello there><sub>"},
		{name: "a command line with spaces and arguments is one word", command: `echo hello`, args: []string{`x`}, wantOut: "", wantCode: 127},
		{name: "user arguments only", command: `echo`, user: []string{`one two`, `$PORT`, `"quoted"`}, wantOut: "one two 8080 quoted\n"},
		{name: "process and user arguments", command: `printf`, args: []string{`%s|`}, user: []string{`u1`, `u 2`, `${HOME}`}, wantOut: "u1|u 2|/home/app|"},
		{name: "an empty user argument", command: `printf`, args: []string{`[%s]`}, user: []string{``}, wantOut: "[]"},
		{name: "eleven arguments", command: `printf`, args: []string{`%s,`, "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, wantOut: "1,2,3,4,5,6,7,8,9,10,"},
	} {
		tc := tc
		for _, platform010 := range []bool{true, false} {
			platform010 := platform010
			label := " (Platform API 0.10+)"
			if !platform010 {
				label = " (Platform API < 0.10)"
			}
			it("runs an API 0.8 shell process like the launcher did: "+tc.name+label, func() {
				dir := t.TempDir()
				p := launch.Process{Type: "web", Command: []string{tc.command}, Args: tc.args, Legacy: true, API: "0.8"}

				original := shellArgv(process{command: p.Command, args: p.Args, legacy: true}, platform010, tc.user, dir)
				wantOut, wantCode := run(t, rewrite.Bash, original, "/")
				Expect(wantOut).To(Equal(tc.wantOut))
				Expect(wantCode).To(Equal(tc.wantCode))

				w := rewrite.Wrap(p, initPath, false)
				argv := directArgv(process{command: w.Command, args: w.Arguments, direct: true}, platform010, tc.user)
				Expect(argv[:2]).To(Equal([]string{initPath, "--"}))
				gotOut, gotCode := run(t, argv[2], argv[2:], dir)

				Expect(gotOut).To(Equal(wantOut))
				Expect(gotCode).To(Equal(wantCode))
			})
		}
	}
}
