package integration_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

const (
	builderLauncherWith    = "pid1-buildpacks/builder:launcher-with"
	builderLauncherWithout = "pid1-buildpacks/builder:launcher-without"
	procfileBuildpackID    = "paketo-buildpacks/procfile"
)

// launcherImages are the images of integration/testdata/app-procfile (a Procfile, an app
// .profile) built by the Procfile buildpack and samples/profiles (profile.d scripts in two
// launch layers), without and with the init buildpack (scripts/builders.sh launcher).
var launcherImages, launcherAppImages imagePair

// imagePair is an image built without and with the init, once.
type imagePair struct {
	once          sync.Once
	with, without string
}

func buildLauncherImages(t *testing.T) (with, without string) {
	return launcherImages.build(t, "pid1-it/launcher")
}

// build builds integration/testdata/app-procfile as repository:with and repository:without with
// the launcher builders and pack's extra arguments, once.
func (pair *imagePair) build(t *testing.T, repository string, extra ...string) (with, without string) {
	t.Helper()
	pair.once.Do(func() {
		for _, builder := range []string{builderLauncherWith, builderLauncherWithout} {
			if err := exec.Command("docker", "image", "inspect", builder).Run(); err != nil {
				t.Fatalf("integration prerequisite missing: image %s is not in the daemon (scripts/builders.sh launcher)", builder)
			}
		}
		app := filepath.Join(settings.Root, "integration", "testdata", "app-procfile")
		for image, builder := range map[string]string{repository + ":with": builderLauncherWith, repository + ":without": builderLauncherWithout} {
			r := run(t, 5*time.Minute, nil, settings.Pack, append([]string{"build", image, "--builder", builder, "--path", app,
				"--pull-policy", "never", "--trust-builder"}, extra...)...)
			if r.ExitCode != 0 {
				t.Fatalf("pack build %s with %s: exit %d\n%s", image, builder, r.ExitCode, r.Output)
			}
		}
		pair.with, pair.without = repository+":with", repository+":without"
	})
	if pair.with == "" {
		t.Fatalf("the images %s could not be built (see the first failure)", repository)
	}
	return pair.with, pair.without
}

// testLauncher checks that what the launcher did for a process still happens when it starts
// through the init (issue 12): for the shell processes of the Procfile buildpack (Buildpack API
// 0.7) and of samples/profiles (0.8), the profile.d and profile.d/<type> scripts of every layer
// and the app's .profile are sourced in the same order, with the same $0 and arguments, the
// working directory is changed to the same way, and the program sees the same environment.
func testLauncher(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	var with, without string
	it.Before(func() {
		with, without = buildLauncherImages(t)
	})

	// launch runs type typ of image as `docker run --entrypoint /cnb/process/<typ>` does, with
	// the user's arguments; stdout and stderr apart.
	launch := func(image, typ string, user ...string) (stdout, stderr string, exit int) {
		args := []string{"run", "--rm", "--hostname", "launcher-test", "-e", "PORT=8080"}
		if typ != "" {
			args = append(args, "--entrypoint", "/cnb/process/"+typ)
		}
		args = append(append(args, image), user...)
		cmd := exec.Command("docker", args...)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), errOut.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("docker %s: %v", strings.Join(args, " "), err)
		}
		return out.String(), errOut.String(), 0
	}

	it("writes the Procfile's shell processes as Buildpack API 0.7 processes, which we wrap as ours", func() {
		before, after := processesByType(t, without), processesByType(t, with)
		for _, typ := range []string{"web", "worker"} {
			Expect(before[typ].BuildpackID).To(Equal(procfileBuildpackID), typ)
			Expect(before[typ].Direct).To(BeFalse(), "%s is a shell process", typ)
			Expect(after[typ].BuildpackID).To(Equal(initBuildpackID), "%s: the wrapped process is ours, in the image label too", typ)
			Expect(after[typ].Direct).To(BeTrue(), typ)
			Expect(after[typ].Command[:4]).To(Equal([]string{initPath, "--", "/bin/bash", "-c"}), typ)
			Expect(after[typ].Command[5:]).To(Equal([]string{"/cnb/process/" + typ, before[typ].Command[0]}), typ)
		}
		Expect(before["web"].Default).To(BeTrue())
		Expect(after["web"].Default).To(BeTrue())
		Expect(before["wd-var"].WorkingDir).To(Equal("$APP_SUB"))
		Expect(after["wd-var"].WorkingDir).To(BeEmpty(), "the launcher would chdir to it literally: the script's bash cds to it")
	})

	type launchCase struct {
		typ  string
		user []string
		// want are strings the output without the init must hold, so that each case checks
		// what it says.
		want []string
		// wantErr are strings standard error without the init must hold.
		wantErr []string
		// exit is the exit code without the init.
		exit int
	}
	// trace matches the TRACE line of profiles names, sourced in this order with $0 the
	// process type's link.
	trace := func(typ string, names ...string) string {
		line := `(?m)^TRACE=`
		for _, n := range names {
			line += regexp.QuoteMeta("["+n+" $0=/cnb/process/"+typ+" $@=") + `[^]]*\]`
		}
		return line + "$"
	}
	for _, tc := range []launchCase{
		{typ: "", want: []string{"args=web 8080 yes\n", "PWD=/workspace OLDPWD=/workspace physical=/workspace\n", "FROM_APP_PROFILE=yes\n", "WEB_ONLY=yes\n"}},
		// The launcher makes a shell process's command line one word when there are arguments.
		{typ: "web", user: []string{"u1", "u 2"}, exit: 127, wantErr: []string{"./show web 8080 yes: No such file or directory"}},
		{typ: "worker", want: []string{"args=worker\n", "WORKER_ONLY=yes\n"}},
		{typ: "wd-var", want: []string{"args=wd-var\n", "PWD=/workspace/sub OLDPWD=/workspace physical=/workspace/sub\n"}},
		{typ: "wd-link", want: []string{"PWD=/workspace/linked OLDPWD=/workspace physical=/workspace/sub\n"}},
		{typ: "wd-missing", want: []string{"args=wd-missing\n", "PWD=/workspace OLDPWD= physical=/workspace\n"},
			wantErr: []string{"/cnb/process/wd-missing: line 5: cd: /does/not/exist: No such file or directory"}},
		{typ: "args", want: []string{"args=args a b 8080\n"}},
		{typ: "args", user: []string{"u1", "$PORT"}, want: []string{"args=args a b 8080 u1 8080\n"}},
	} {
		tc := tc
		name := tc.typ
		if name == "" {
			name = "the default process"
		}
		it("gives "+name+" "+strings.Join(tc.user, " ")+" the launcher's profiles, working directory and environment", func() {
			wantOut, wantErr, wantExit := launch(without, tc.typ, tc.user...)
			t.Logf("without the init: exit %d\nstdout:\n%s\nstderr:\n%s", wantExit, wantOut, wantErr)
			Expect(wantExit).To(Equal(tc.exit))
			for _, w := range tc.want {
				Expect(wantOut).To(ContainSubstring(w))
			}
			for _, w := range tc.wantErr {
				Expect(wantErr).To(ContainSubstring(w))
			}
			typ := tc.typ
			if typ == "" {
				typ = "web"
			}
			var names []string
			switch typ {
			case "web":
				names = []string{"10-common.sh", "20-common.sh", "30-web.sh", ".hidden.sh", "00-web.sh", ".profile"}
			case "worker":
				names = []string{"10-common.sh", "20-common.sh", "30-worker.sh", ".hidden.sh", ".profile"}
			default:
				names = []string{"10-common.sh", "20-common.sh", ".hidden.sh", ".profile"}
			}
			if tc.exit == 0 {
				Expect(wantOut).To(MatchRegexp(trace(typ, names...)))
			}

			gotOut, gotErr, gotExit := launch(with, tc.typ, tc.user...)
			Expect(gotOut).To(Equal(wantOut), "stdout with the init")
			Expect(gotErr).To(Equal(wantErr), "stderr with the init")
			Expect(gotExit).To(Equal(wantExit), "exit code with the init")
		})
	}

	it("sources .profile and changes to the app directory of an app built in another one (pack build --workspace /app)", func() {
		// The launcher reads CNB_APP_DIR and CNB_LAYERS_DIR and leaves them out of the process's
		// environment: the script has the build's directories written in.
		appWith, appWithout := launcherAppImages.build(t, "pid1-it/launcher-app", "--workspace", "/app")
		wantOut, wantErr, wantExit := launch(appWithout, "")
		t.Logf("without the init: exit %d\nstdout:\n%s\nstderr:\n%s", wantExit, wantOut, wantErr)
		Expect(wantExit).To(Equal(0))
		Expect(wantOut).To(ContainSubstring("PWD=/app OLDPWD=/app physical=/app\n"))
		Expect(wantOut).To(ContainSubstring("FROM_APP_PROFILE=yes\n"))
		gotOut, gotErr, gotExit := launch(appWith, "")
		t.Logf("with the init: exit %d\nstdout:\n%s\nstderr:\n%s", gotExit, gotOut, gotErr)
		Expect(gotOut).To(Equal(wantOut), "stdout with the init")
		Expect(gotErr).To(Equal(wantErr), "stderr with the init")
		Expect(gotExit).To(Equal(wantExit), "exit code with the init")
	})

	it("finds a direct process's relative command from the working directory, as the launcher ended up doing, and exits 127 where the launcher exited 82", func() {
		show := func(image, typ string) (string, string, int) {
			stdout, stderr, exit := launch(image, typ)
			t.Logf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", typ, image, exit, stdout, stderr)
			return stdout, stderr, exit
		}
		wantOut, _, wantExit := show(without, "relative")
		gotOut, _, gotExit := show(with, "relative")
		Expect(wantExit).To(Equal(0))
		Expect(wantOut).To(Equal("the working directory's bin/tool, in /workspace/sub\n"), "the launcher checks bin/tool in the app directory, then executes it from the working directory")
		Expect(gotOut).To(Equal(wantOut))
		Expect(gotExit).To(Equal(wantExit))

		// The launcher prints its errors on standard output.
		wantOut, _, wantExit = show(without, "relative-in-working-dir-only")
		Expect(wantExit).To(Equal(82))
		Expect(wantOut).To(ContainSubstring(`failed to launch: path lookup: exec: "bin/sub-tool": stat bin/sub-tool: no such file or directory`))
		gotOut, _, gotExit = show(with, "relative-in-working-dir-only")
		Expect(gotExit).To(Equal(0), "the init looks in the working directory only: more permissive")
		Expect(gotOut).To(Equal("the working directory's bin/sub-tool, in /workspace/sub\n"))

		wantOut, _, wantExit = show(without, "missing")
		Expect(wantExit).To(Equal(82))
		Expect(wantOut).To(ContainSubstring(`failed to launch: path lookup: exec: "/workspace/no-such-program": stat /workspace/no-such-program: no such file or directory`))
		_, gotErr, gotExit := show(with, "missing")
		Expect(gotExit).To(Equal(127), "the init keeps the shell's code for a command not found")
		Expect(gotErr).To(ContainSubstring("/workspace/no-such-program: No such file or directory"))
	})
}
