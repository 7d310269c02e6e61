package rewrite_test

import (
	"testing"

	"github.com/buildpacks/libcnb/v2"
	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/rewrite"
	"github.com/pid1-buildpacks/init/internal/tabletest"
)

const initPath = "/layers/pid1-buildpacks_init/init/sbin/init"

// group is the ids of a build's group, in order.
var image = rewrite.Image{LayersDir: "/layers", AppDir: "/workspace", Group: []string{"paketo-buildpacks/procfile", "samples/profiles", "pid1-buildpacks/init"}}

func testWrap(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	type wrapCase struct {
		in        launch.Process
		isDefault bool
		expected  libcnb.Process
	}
	for name, tc := range tabletest.Sorted(map[string]wrapCase{
		"API 0.10 keeps command, args, working-dir and default": {
			in:        launch.Process{Type: "web", Command: []string{"java", "-jar"}, Args: []string{"app.jar"}, Direct: true, WorkingDirectory: "/workspace/sub", Default: true, API: "0.10"},
			isDefault: true,
			expected: libcnb.Process{Type: "web", Command: []string{initPath, "--", "java", "-jar"}, Arguments: []string{"app.jar"},
				WorkingDirectory: "/workspace/sub", Default: true},
		},
		"API 0.9 single-element command keeps its overridable args": {
			in:       launch.Process{Type: "worker", Command: []string{"node"}, Args: []string{"worker.js"}, Direct: true, API: "0.9"},
			expected: libcnb.Process{Type: "worker", Command: []string{initPath, "--", "node"}, Arguments: []string{"worker.js"}},
		},
		"API 0.8 direct process moves its args into the command": {
			in:       launch.Process{Type: "web", Command: []string{"python"}, Args: []string{"app.py", "--debug"}, Direct: true, Legacy: true, API: "0.8", WorkingDirectory: "/w"},
			expected: libcnb.Process{Type: "web", Command: []string{initPath, "--", "python", "app.py", "--debug"}, WorkingDirectory: "/w"},
		},
		"API 0.7 direct process without args": {
			in:       launch.Process{Type: "web", Command: []string{"/workspace/run"}, Direct: true, Legacy: true, API: "0.7"},
			expected: libcnb.Process{Type: "web", Command: []string{initPath, "--", "/workspace/run"}},
		},
		"API 0.8 shell process runs through bash with the launcher-compatible script": {
			in:        launch.Process{Type: "web", Command: []string{"bundle exec rackup -p $PORT"}, Args: []string{"-o", "0.0.0.0"}, Legacy: true, API: "0.8"},
			isDefault: true,
			expected: libcnb.Process{Type: "web", Command: []string{initPath, "--", "/bin/bash", "-c", rewrite.ShellScript("web", "", image),
				"/cnb/process/web", "bundle exec rackup -p $PORT", "-o", "0.0.0.0"}, Default: true},
		},
		"API 0.8 shell process leaves its working-dir to the script's cd": {
			in: launch.Process{Type: "task", Command: []string{"make"}, WorkingDirectory: "$HOME/src", Legacy: true, API: "0.8"},
			expected: libcnb.Process{Type: "task", Command: []string{initPath, "--", "/bin/bash", "-c", rewrite.ShellScript("task", "$HOME/src", image),
				"/cnb/process/task", "make"}},
		},
		"the default flag comes from the caller, not the process": {
			in:       launch.Process{Type: "web", Command: []string{"a"}, Direct: true, Default: true, API: "0.10"},
			expected: libcnb.Process{Type: "web", Command: []string{initPath, "--", "a"}},
		},
	}) {
		tc := tc
		it("wraps "+name, func() {
			Expect(rewrite.Wrap(tc.in, initPath, image, tc.isDefault)).To(Equal(tc.expected))
		})
	}

	it("does not share the original's slices", func() {
		p := launch.Process{Type: "web", Command: []string{"a", "b"}, Args: []string{"c"}, Direct: true, API: "0.10"}
		w := rewrite.Wrap(p, initPath, rewrite.Image{}, false)
		w.Command[2], w.Arguments[0] = "x", "y"
		Expect(p.Command).To(Equal([]string{"a", "b"}))
		Expect(p.Args).To(Equal([]string{"c"}))
	})

	type argvCase struct {
		in   launch.Process
		user []string
		// expected is what the launcher executed before wrapping.
		expected []string
	}
	for name, tc := range tabletest.Sorted(map[string]argvCase{
		"API 0.8 direct, no user args":   {in: launch.Process{Command: []string{"py"}, Args: []string{"a"}, Direct: true, Legacy: true}, expected: []string{"py", "a"}},
		"API 0.8 direct, user args":      {in: launch.Process{Command: []string{"py"}, Args: []string{"a"}, Direct: true, Legacy: true}, user: []string{"u"}, expected: []string{"py", "a", "u"}},
		"API 0.9 one element, no user":   {in: launch.Process{Command: []string{"py"}, Args: []string{"a"}, Direct: true}, expected: []string{"py", "a"}},
		"API 0.9 one element, user":      {in: launch.Process{Command: []string{"py"}, Args: []string{"a"}, Direct: true}, user: []string{"u"}, expected: []string{"py", "u"}},
		"API 0.10 two elements, no user": {in: launch.Process{Command: []string{"py", "-u"}, Args: []string{"a"}, Direct: true}, expected: []string{"py", "-u", "a"}},
		"API 0.10 two elements, user":    {in: launch.Process{Command: []string{"py", "-u"}, Args: []string{"a"}, Direct: true}, user: []string{"u", "v"}, expected: []string{"py", "-u", "u", "v"}},
	}) {
		tc := tc
		it("keeps the launcher's argv behind the init: "+name, func() {
			w := rewrite.Wrap(tc.in, initPath, rewrite.Image{}, false)
			argv := directArgv(process{command: w.Command, args: w.Arguments, direct: true}, true, tc.user)
			Expect(argv).To(Equal(concat([]string{initPath, "--"}, tc.expected)))
		})
	}
}

func testExistingInit(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	const (
		appDir     = "/workspace"
		formerPath = "/layers/pid1-buildpacks_init/init/bin/init"
	)
	direct := func(command ...string) launch.Process {
		return launch.Process{Command: command, Direct: true, API: "0.10"}
	}
	shell := func(line string, args ...string) launch.Process {
		return launch.Process{Command: []string{line}, Args: args, Legacy: true, API: "0.8"}
	}

	type existing struct {
		in   launch.Process
		name string // "" when p has no init
	}
	for name, tc := range tabletest.Sorted(map[string]existing{
		"our init":                                       {in: direct(initPath, "--", "a"), name: initPath},
		"our init at its former path":                    {in: direct(formerPath, "--", "a"), name: formerPath},
		"tini by name":                                   {in: direct("tini", "--", "a"), name: "tini"},
		"tini-static by path":                            {in: direct("/usr/bin/tini-static", "a"), name: "tini-static"},
		"tini's release name tini-amd64":                 {in: direct("/usr/local/bin/tini-amd64", "--", "a"), name: "tini-amd64"},
		"tini-static-arm64":                              {in: direct("/tini-static-arm64", "--", "a"), name: "tini-static-arm64"},
		"tini-static-muslc-amd64":                        {in: direct("tini-static-muslc-amd64", "--", "a"), name: "tini-static-muslc-amd64"},
		"tini-armhf":                                     {in: direct("/sbin/tini-armhf", "a"), name: "tini-armhf"},
		"docker-init":                                    {in: direct("/usr/bin/docker-init", "--", "a"), name: "docker-init"},
		"dumb-init":                                      {in: launch.Process{Command: []string{"/usr/local/bin/dumb-init"}, Args: []string{"a"}, Direct: true, Legacy: true}, name: "dumb-init"},
		"dumb-init's release name":                       {in: direct("/usr/local/bin/dumb-init_1.2.5_x86_64", "a"), name: "dumb-init_1.2.5_x86_64"},
		"catatonit":                                      {in: direct("catatonit", "--", "x"), name: "catatonit"},
		"tini in a buildpack's layer":                    {in: direct("/layers/paketo-buildpacks_tini/tini/bin/tini", "--", "a"), name: "tini"},
		"env then tini":                                  {in: direct("/usr/bin/env", "tini", "--", "a"), name: "tini"},
		"env with options and variables":                 {in: direct("env", "-i", "-u", "HOME", "--unset=X", "-C", "/w", "PORT=8080", "A=", "tini-static", "--", "a"), name: "tini-static"},
		"env -S with the init in it":                     {in: direct("/usr/bin/env", "-S", "dumb-init --", "a"), name: "dumb-init"},
		"env --":                                         {in: direct("/bin/env", "--", "X=1", "catatonit", "--", "a"), name: "catatonit"},
		"env with the command in args":                   {in: launch.Process{Command: []string{"env"}, Args: []string{"tini", "--", "a"}, Direct: true, Legacy: true}, name: "tini"},
		"a shell line starting with tini":                {in: shell("  tini -- bundle exec puma"), name: "tini"},
		"a shell line exec tini":                         {in: shell("exec tini -- bundle exec puma"), name: "tini"},
		"a shell line exec with options":                 {in: shell(`exec -a puma /usr/bin/tini-amd64 -s -- bundle exec puma "$PORT"`), name: "tini-amd64"},
		"a shell line with assignments":                  {in: shell(`RACK_ENV=production PORT="$PORT" exec env X=1 tini -- puma`), name: "tini"},
		"a shell line after a comment":                   {in: shell("# start\n\nexec 'tini' -- puma; echo unreachable"), name: "tini"},
		"a shell line that is the init alone, with args": {in: shell("tini", "--", "puma"), name: "tini"},
		"bash -c exec tini":                              {in: direct("bash", "-c", "exec tini -- app"), name: "tini"},
		"bash -ec tini as the only command":              {in: direct("/bin/bash", "-e", "-o", "pipefail", "-c", "tini -- app \"$@\"", "bash"), name: "tini"},
		"sh -c exec dumb-init":                           {in: direct("/bin/sh", "-c", "exec dumb-init app"), name: "dumb-init"},
		"env then bash -c exec tini":                     {in: direct("/usr/bin/env", "bash", "-lc", "exec tini -- app"), name: "tini"},

		"an app binary named tini":                     {in: direct("/workspace/tini", "serve")},
		"an app binary named tini, relative":           {in: direct("./tini", "serve")},
		"an app binary in a subdirectory":              {in: direct("bin/tini-amd64", "serve")},
		"an app binary named tini, after env":          {in: direct("/usr/bin/env", "/workspace/bin/tini", "serve")},
		"an app binary named tini, shell line":         {in: shell("exec /workspace/tini serve")},
		"an app path escaping nothing":                 {in: direct("/workspace/../workspace/tini")},
		"an env of the app's":                          {in: direct("/workspace/env", "tini", "--", "a")},
		"a plain command":                              {in: direct("java", "-jar", "tini")},
		"a command named like one":                     {in: direct("/usr/bin/tinix")},
		"tini with an unknown suffix":                  {in: direct("/usr/bin/tini-foo")},
		"another init binary":                          {in: direct("/other/bin/init")},
		"an empty shell line":                          {in: shell("   ")},
		"a direct command of spaces with tini":         {in: launch.Process{Command: []string{"tini --"}, Direct: true, Legacy: true}},
		"a shell line whose init is a variable":        {in: shell("exec $INIT -- app")},
		"a shell line whose init is a glob":            {in: shell("exec /usr/bin/tin? -- app")},
		"a shell line with tini then more":             {in: shell("tini -- app; echo done")},
		"a shell line with tini in a pipeline":         {in: shell("exec tini -- app | tee log")},
		"a shell line with tini in the background":     {in: shell("exec tini -- app & wait")},
		"a shell line whose first command is not tini": {in: shell("cd /w && exec tini -- app")},
		"a shell line of several words, with args":     {in: shell("tini -- puma", "-p", "80")},
		"sh -c tini without exec, which dash keeps":    {in: direct("sh", "-c", "tini -- app")},
		"bash running a script file":                   {in: direct("bash", "tini")},
		"an unterminated quote":                        {in: shell("exec 'tini -- app")},
		"env with nothing to run":                      {in: direct("env", "-i")},
	}) {
		tc := tc
		it("recognises "+name, func() {
			name, ok := rewrite.ExistingInit(tc.in, appDir, initPath, formerPath)
			Expect(ok).To(Equal(tc.name != ""))
			Expect(name).To(Equal(tc.name))
		})
	}
}
