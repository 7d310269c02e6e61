package rewrite_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/rewrite"
)

// run executes argv with the program at path in dir, with a small environment and extra, and
// returns stdout, stderr and the exit code.
func run(t *testing.T, path string, argv []string, dir string, extra ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := &exec.Cmd{Path: path, Args: argv, Dir: dir, Stdout: &stdout, Stderr: &stderr,
		Env: append([]string{"PATH=/usr/bin:/bin", "GREETING=hello there", "HOME=/home/app", "PORT=8080"}, extra...)}
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	default:
		t.Fatalf("unable to run %v: %s", argv, err)
		return "", "", -1
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

				original := shellArgv(process{command: p.Command, args: p.Args, legacy: true}, platform010, tc.user,
					shell{dir: dir, caller: "/cnb/process/web"})
				wantOut, _, wantCode := run(t, rewrite.Bash, original, dir)
				Expect(wantOut).To(Equal(tc.wantOut))
				Expect(wantCode).To(Equal(tc.wantCode))

				gotOut, _, gotCode := runWrapped(t, p, rewrite.Image{AppDir: dir}, platform010, tc.user, dir)
				Expect(gotOut).To(Equal(wantOut))
				Expect(gotCode).To(Equal(wantCode))
			})
		}
	}
}

// runWrapped wraps p and runs, in the app directory appDir, what the launcher executes after the
// init's "--" for it, as the init would: stdout, stderr and the exit code.
func runWrapped(t *testing.T, p launch.Process, image rewrite.Image, platform010 bool, user []string, appDir string, env ...string) (string, string, int) {
	t.Helper()
	w := rewrite.Wrap(p, initPath, image, false)
	if w.WorkingDirectory != "" {
		t.Fatalf("a wrapped shell process keeps working-dir %q: the launcher would change to it before the init starts", w.WorkingDirectory)
	}
	argv := directArgv(process{command: w.Command, args: w.Arguments, direct: true}, platform010, user)
	if len(argv) < 3 || argv[0] != initPath || argv[1] != "--" {
		t.Fatalf("the wrapped argv does not start with the init: %q", argv)
	}
	return run(t, argv[2], argv[2:], appDir, env...)
}

// profileTree is a layers directory and an app directory as an image of the group
// samples/early, samples/profiles, pid1-buildpacks/init holds them at launch.
type profileTree struct {
	layers, app string
}

// profileGroup is the group the profile tests' image was built with; samples/other has layers
// but is not in the group.
var profileGroup = []string{"samples/early", "samples/profiles", "pid1-buildpacks/init"}

// record is a profile script that appends its name, $0 and "$@" to the exported TRACE.
const record = `export TRACE="${TRACE}[${BASH_SOURCE[0]##*/} \$0=$0 \$@=$*]"` + "\n"

func newProfileTree(t *testing.T) profileTree {
	t.Helper()
	root := t.TempDir()
	tree := profileTree{layers: filepath.Join(root, "layers"), app: filepath.Join(root, "workspace")}
	files := map[string]string{
		"layers/samples_profiles/b-layer/profile.d/20-b.sh":          record,
		"layers/samples_profiles/b-layer/profile.d/10-b.sh":          record + "export SUBDIR=sub\nLOCAL_ONLY=not-exported\n",
		"layers/samples_profiles/b-layer/profile.d/.hidden.sh":       record,
		"layers/samples_profiles/b-layer/profile.d/web/05-web.sh":    record + "export WEB_ONLY=yes\n",
		"layers/samples_profiles/b-layer/profile.d/worker/worker.sh": record + "export WORKER_ONLY=yes\n",
		"layers/samples_profiles/a-layer/profile.d/Z.sh":             record,
		"layers/samples_profiles/a-layer/profile.d/a.sh":             record,
		"layers/samples_profiles/a-layer/profile.d/sub/not-sourced":  "export WRONG=sourced-a-directory\n",
		"layers/samples_profiles/not-a-layer":                        "",
		"layers/samples_early/early/profile.d/zz-early.sh":           record,
		"layers/samples_early/early/env.launch/X":                    "",
		"layers/samples_other/other/profile.d/other.sh":              "export WRONG=sourced-a-buildpack-outside-the-group\n",
		"layers/pid1-buildpacks_init/init/sbin/init":                 "",
		"workspace/.profile":                                         record + "export FROM_APP_PROFILE=\"$(pwd)\"\ncd /\n",
		"workspace/sub/file":                                         "",
	}
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"workspace/linked": "sub",
		"layers/samples_profiles/b-layer/profile.d/30-l": "20-b.sh",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

func testProfiles(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	// show prints what the program sees: the profiles' trace, the working directory (logical,
	// physical, previous), its $0 and arguments, and the whole environment.
	const show = `printf '%s\n' "trace=$TRACE" "PWD=$PWD" "OLDPWD=$OLDPWD" "pwd -P=$(pwd -P)" "0=$0" "args=$*"; env | sort`

	type profileCase struct {
		name       string
		typ        string
		command    string
		args, user []string
		workingDir string
		noProfile  bool
		// env is added to the process's environment.
		env []string
		// extra are more files of the layers tree, by path under its root, each a profile that
		// records itself.
		extra []string
		// broken makes a profile fail and another unreadable.
		broken bool
		// order is the profiles the launcher sources, by name; want are strings its output must
		// hold: both check that the case tests what it says.
		order []string
		want  []string
	}
	for _, tc := range []profileCase{
		{name: "profile.d, then profile.d/<type>, of every layer of every buildpack in order, then .profile", typ: "web", command: show,
			order: []string{"zz-early.sh", "Z.sh", "a.sh", ".hidden.sh", "10-b.sh", "20-b.sh", "30-l", "05-web.sh", ".profile"},
			want:  []string{"[zz-early.sh $0=/cnb/process/web $@=printf", "WEB_ONLY=yes", "FROM_APP_PROFILE=/", "OLDPWD=/\n"}},
		{name: "another type's profile.d/<type>", typ: "worker", command: show,
			order: []string{"zz-early.sh", "Z.sh", "a.sh", ".hidden.sh", "10-b.sh", "20-b.sh", "30-l", "worker.sh", ".profile"}, want: []string{"WORKER_ONLY=yes"}},
		{name: "profiles see the command line and arguments as $1...", typ: "web", command: "printf", args: []string{"%s|", "$TRACE"}, user: []string{"$GREETING"},
			want: []string{`$@=printf %s| $TRACE $GREETING]`, "|hello there|"}},
		{name: "a profile that fails, and one that is not readable", typ: "web", command: show, broken: true, want: []string{"[20-b.sh"}},
		{name: "a working-dir made of a variable a profile exported", typ: "web", command: show, workingDir: "$APP/$SUBDIR", want: []string{"PWD=", "/workspace/sub\n"}},
		{name: "a working-dir through a symbolic link: PWD is the logical path", typ: "web", command: show, workingDir: "$APP/linked", want: []string{"/workspace/linked\n", "OLDPWD=/\n"}},
		{name: "a working-dir that does not exist: bash carries on where the profiles left it", typ: "web", command: show, workingDir: "/does/not/exist", want: []string{"PWD=/\n"}},
		{name: "no .profile", typ: "web", command: show, noProfile: true},
		{name: "layer and file names with spaces, $, backquotes, newlines, glob characters and bytes above 0x7f", typ: "web", command: show,
			extra: []string{"layers/samples_early/a layer/profile.d/sp ace.sh", "layers/samples_early/d$HOME/profile.d/$HOME.sh",
				"layers/samples_early/n\nl/profile.d/n\nl.sh", "layers/samples_early/st*r/profile.d/[ab]?.sh",
				"layers/samples_early/st*r/profile.d/`echo tick`.sh", "layers/samples_early/\xe9\xff/profile.d/\x80.sh",
				"layers/samples_early/st*r/profile.d/B.sh", "layers/samples_early/st*r/profile.d/_.sh"},
			want: []string{"trace=[sp ace.sh $0=", "][zz-early.sh $0=", "][n\nl.sh $0=", "][B.sh $0=", "][[ab]?.sh $0=", "][_.sh $0=", "][\x80.sh $0=", "][Z.sh $0="}},
		{name: "failglob imported from BASHOPTS", typ: "web", command: show, env: []string{"BASHOPTS=failglob"},
			order: []string{"zz-early.sh", "Z.sh", "a.sh", ".hidden.sh", "10-b.sh", "20-b.sh", "30-l", "05-web.sh", ".profile"}},
		{name: "noglob imported from SHELLOPTS", typ: "web", command: show, env: []string{"SHELLOPTS=noglob"},
			order: []string{"zz-early.sh", "Z.sh", "a.sh", ".hidden.sh", "10-b.sh", "20-b.sh", "30-l", "05-web.sh", ".profile"}},
	} {
		tc := tc
		it("sources the profiles and changes directory as the launcher did: "+tc.name, func() {
			tree := newProfileTree(t)
			if tc.noProfile {
				Expect(os.Remove(filepath.Join(tree.app, ".profile"))).To(Succeed())
			}
			for _, name := range tc.extra {
				path := filepath.Join(filepath.Dir(tree.layers), name)
				Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
				Expect(os.WriteFile(path, []byte(record), 0o644)).To(Succeed())
			}
			if tc.broken {
				Expect(os.WriteFile(filepath.Join(tree.layers, "samples_profiles/b-layer/profile.d/10-b.sh"), []byte("no-such-command\nreturn 3\n"), 0o644)).To(Succeed())
				Expect(os.Symlink("/does/not/exist", filepath.Join(tree.layers, "samples_profiles/b-layer/profile.d/15-dangling"))).To(Succeed())
			}
			// The launcher reads CNB_LAYERS_DIR and CNB_APP_DIR and leaves them out of the process's
			// environment (lifecycle env/launch.go LaunchEnvExcludelist): the script never sees them.
			env := append([]string{"APP=" + tree.app}, tc.env...)
			p := launch.Process{Type: tc.typ, Command: []string{tc.command}, Args: tc.args, WorkingDirectory: tc.workingDir, Legacy: true, API: "0.8"}

			dir := tc.workingDir
			if dir == "" {
				dir = tree.app
			}
			original := shellArgv(process{command: p.Command, args: p.Args, legacy: true}, true, tc.user, shell{
				profiles: launcherProfiles(t, tree.layers, tree.app, profileGroup, tc.typ),
				dir:      dir,
				caller:   "/cnb/process/" + tc.typ,
			})
			wantOut, wantErr, wantCode := run(t, rewrite.Bash, original, tree.app, env...)
			for _, w := range tc.want {
				Expect(wantOut).To(ContainSubstring(w))
			}
			if tc.order != nil {
				var sourced []string
				for _, m := range regexp.MustCompile(`\[(\S+) \$0=`).FindAllStringSubmatch(strings.SplitN(wantOut, "\n", 2)[0], -1) {
					sourced = append(sourced, m[1])
				}
				Expect(sourced).To(Equal(tc.order))
			}
			Expect(wantOut).NotTo(ContainSubstring("WRONG"))

			gotOut, gotErr, gotCode := runWrapped(t, p, rewrite.Image{LayersDir: tree.layers, AppDir: tree.app, Group: profileGroup}, true, tc.user, tree.app, env...)
			Expect(gotOut).To(Equal(wantOut))
			Expect(gotCode).To(Equal(wantCode))
			Expect(gotErr).To(Equal(wantErr))
			t.Logf("stdout:\n%s\nstderr:\n%s", gotOut, gotErr)
		})
	}
}
