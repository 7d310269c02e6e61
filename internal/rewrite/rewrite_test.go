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

const initPath = "/layers/pid1-buildpacks_init/init/bin/init"

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
			expected: libcnb.Process{Type: "web", Command: []string{initPath, "--", "/bin/bash", "-c", rewrite.ShellScript, "bash",
				"bundle exec rackup -p $PORT", "-o", "0.0.0.0"}, Default: true},
		},
		"the default flag comes from the caller, not the process": {
			in:       launch.Process{Type: "web", Command: []string{"a"}, Direct: true, Default: true, API: "0.10"},
			expected: libcnb.Process{Type: "web", Command: []string{initPath, "--", "a"}},
		},
	}) {
		tc := tc
		it("wraps "+name, func() {
			Expect(rewrite.Wrap(tc.in, initPath, tc.isDefault)).To(Equal(tc.expected))
		})
	}

	it("does not share the original's slices", func() {
		p := launch.Process{Type: "web", Command: []string{"a", "b"}, Args: []string{"c"}, Direct: true, API: "0.10"}
		w := rewrite.Wrap(p, initPath, false)
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
			w := rewrite.Wrap(tc.in, initPath, false)
			argv := directArgv(process{command: w.Command, args: w.Arguments, direct: true}, true, tc.user)
			Expect(argv).To(Equal(concat([]string{initPath, "--"}, tc.expected)))
		})
	}
}

func testExistingInit(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	type existing struct {
		in   launch.Process
		name string
		ok   bool
	}
	for name, tc := range tabletest.Sorted(map[string]existing{
		"our init":                 {in: launch.Process{Command: []string{initPath, "--", "a"}, Direct: true}, name: initPath, ok: true},
		"tini by name":             {in: launch.Process{Command: []string{"tini", "--", "a"}, Direct: true}, name: "tini", ok: true},
		"tini-static by path":      {in: launch.Process{Command: []string{"/usr/bin/tini-static", "a"}, Direct: true}, name: "tini-static", ok: true},
		"dumb-init":                {in: launch.Process{Command: []string{"/usr/local/bin/dumb-init"}, Args: []string{"a"}, Direct: true, Legacy: true}, name: "dumb-init", ok: true},
		"catatonit":                {in: launch.Process{Command: []string{"catatonit", "--", "x"}, Direct: true}, name: "catatonit", ok: true},
		"a shell line with tini":   {in: launch.Process{Command: []string{"  tini -- bundle exec puma"}, Legacy: true}, name: "tini", ok: true},
		"a plain command":          {in: launch.Process{Command: []string{"java", "-jar", "tini"}, Direct: true}, ok: false},
		"a command named like one": {in: launch.Process{Command: []string{"/usr/bin/tinix"}, Direct: true}, ok: false},
		"another init binary":      {in: launch.Process{Command: []string{"/other/bin/init"}, Direct: true}, ok: false},
		"an empty shell line":      {in: launch.Process{Command: []string{"   "}, Legacy: true}, ok: false},
		"a direct command of spaces with tini as a word": {in: launch.Process{Command: []string{"tini --"}, Direct: true, Legacy: true}, ok: false},
	}) {
		tc := tc
		it("recognises "+name, func() {
			name, ok := rewrite.ExistingInit(tc.in, initPath)
			Expect(ok).To(Equal(tc.ok))
			Expect(name).To(Equal(tc.name))
		})
	}
}
