package launch_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/tabletest"
)

func testReadLaunchTOML(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		path   string
	)

	it.Before(func() {
		path = filepath.Join(t.TempDir(), "launch.toml")
	})

	write := func(content string) {
		Expect(os.WriteFile(path, []byte(content), 0644)).To(Succeed())
	}

	type valid struct {
		api      string
		content  string
		expected []launch.Process
	}
	for name, tc := range tabletest.Sorted(map[string]valid{
		"API 0.7 direct process": {
			api:     "0.7",
			content: "[[processes]]\ntype = \"web\"\ncommand = \"python\"\nargs = [\"app.py\"]\ndirect = true\n",
			expected: []launch.Process{{Type: "web", Command: []string{"python"}, Args: []string{"app.py"}, Direct: true,
				BuildpackID: "bp/a", API: "0.7", Legacy: true}},
		},
		"API 0.8 shell process without a direct key": {
			api:     "0.8",
			content: "[[processes]]\ntype = \"web\"\ncommand = \"bundle exec rackup -p $PORT\"\ndefault = true\nworking-dir = \"/workspace/app\"\n",
			expected: []launch.Process{{Type: "web", Command: []string{"bundle exec rackup -p $PORT"}, Direct: false, Default: true,
				WorkingDirectory: "/workspace/app", BuildpackID: "bp/a", API: "0.8", Legacy: true}},
		},
		"API 0.8 shell process with direct = false and args": {
			api:     "0.8",
			content: "[[processes]]\ntype = \"task\"\ncommand = \"echo\"\nargs = [\"a b\", \"$HOME\"]\ndirect = false\n",
			expected: []launch.Process{{Type: "task", Command: []string{"echo"}, Args: []string{"a b", "$HOME"}, Direct: false,
				BuildpackID: "bp/a", API: "0.8", Legacy: true}},
		},
		"API 0.9 array command": {
			api:     "0.9",
			content: "[[processes]]\ntype = \"web\"\ncommand = [\"node\", \"server.js\"]\nargs = [\"--port\", \"8080\"]\n",
			expected: []launch.Process{{Type: "web", Command: []string{"node", "server.js"}, Args: []string{"--port", "8080"}, Direct: true,
				BuildpackID: "bp/a", API: "0.9"}},
		},
		"API 0.10 with working-dir, default and exec-env": {
			api: "0.10",
			content: "[[processes]]\ntype = \"web\"\ncommand = [\"java\"]\nargs = [\"-jar\", \"app.jar\"]\nworking-dir = \"/workspace/sub\"\ndefault = true\n" +
				"[[processes]]\ntype = \"worker\"\ncommand = [\"java\", \"-cp\", \"app.jar\", \"Worker\"]\nexec-env = [\"production\"]\n",
			expected: []launch.Process{
				{Type: "web", Command: []string{"java"}, Args: []string{"-jar", "app.jar"}, Direct: true, Default: true,
					WorkingDirectory: "/workspace/sub", BuildpackID: "bp/a", API: "0.10"},
				{Type: "worker", Command: []string{"java", "-cp", "app.jar", "Worker"}, Direct: true, ExecEnv: []string{"production"},
					BuildpackID: "bp/a", API: "0.10"},
			},
		},
		"unknown API: format inferred from each command": {
			api: "",
			content: "[[processes]]\ntype = \"old\"\ncommand = \"run.sh\"\ndirect = true\n" +
				"[[processes]]\ntype = \"new\"\ncommand = [\"run\", \"--fast\"]\n",
			expected: []launch.Process{
				{Type: "old", Command: []string{"run.sh"}, Direct: true, BuildpackID: "bp/a", Legacy: true},
				{Type: "new", Command: []string{"run", "--fast"}, Direct: true, BuildpackID: "bp/a"},
			},
		},
		"API 0.10 empty and missing commands, which the lifecycle accepts": {
			api:     "0.10",
			content: "[[processes]]\ntype = \"empty\"\ncommand = []\n[[processes]]\ntype = \"missing\"\n",
			expected: []launch.Process{
				{Type: "empty", Command: []string{}, Direct: true, BuildpackID: "bp/a", API: "0.10"},
				{Type: "missing", Direct: true, BuildpackID: "bp/a", API: "0.10"},
			},
		},
		"no processes": {
			api:      "0.10",
			content:  "[[labels]]\nkey = \"a\"\nvalue = \"b\"\n",
			expected: nil,
		},
	}) {
		tc := tc
		it("reads "+name, func() {
			write(tc.content)
			processes, err := launch.ReadLaunchTOML(path, "bp/a", tc.api)
			Expect(err).NotTo(HaveOccurred())
			Expect(processes).To(Equal(tc.expected))
		})
	}

	type invalid struct {
		api      string
		content  string
		contains []string
	}
	for name, tc := range tabletest.Sorted(map[string]invalid{
		"an array command for API 0.8": {
			api: "0.8", content: "[[processes]]\ntype = \"web\"\ncommand = [\"a\"]\n",
			contains: []string{"\"web\"", "command must be a string for Buildpack API 0.8"},
		},
		"a string command for API 0.9": {
			api: "0.9", content: "[[processes]]\ntype = \"web\"\ncommand = \"a\"\n",
			contains: []string{"\"web\"", "command must be an array of strings for Buildpack API 0.9"},
		},
		"a direct key for API 0.10": {
			api: "0.10", content: "[[processes]]\ntype = \"web\"\ncommand = [\"a\"]\ndirect = true\n",
			contains: []string{"\"web\"", "direct is not supported for Buildpack API 0.10"},
		},
		"a direct key with an array command and unknown API": {
			api: "", content: "[[processes]]\ntype = \"web\"\ncommand = [\"a\"]\ndirect = true\n",
			contains: []string{"direct is not supported with an array command"},
		},
		"a command of another type": {
			api: "", content: "[[processes]]\ntype = \"web\"\ncommand = 7\n",
			contains: []string{"must be a string or an array of strings"},
		},
		"a process without a type": {
			api: "0.10", content: "[[processes]]\ncommand = [\"a\"]\n",
			contains: []string{"a process has no type"},
		},
		"two default processes": {
			api: "0.10", content: "[[processes]]\ntype = \"a\"\ncommand = [\"a\"]\ndefault = true\n[[processes]]\ntype = \"b\"\ncommand = [\"b\"]\ndefault = true\n",
			contains: []string{"more than one default process type (a, b)"},
		},
		"invalid TOML": {
			api: "0.10", content: "[[processes]\ntype = ",
			contains: []string{"unable to read"},
		},
		"an invalid API version": {
			api: "zero", content: "[[processes]]\ntype = \"a\"\ncommand = [\"a\"]\n",
			contains: []string{"invalid Buildpack API version \"zero\""},
		},
	}) {
		tc := tc
		it("rejects "+name+", naming the file", func() {
			write(tc.content)
			_, err := launch.ReadLaunchTOML(path, "bp/a", tc.api)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(path))
			for _, s := range tc.contains {
				Expect(err.Error()).To(ContainSubstring(s))
			}
		})
	}
}

func testReadGroup(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		path   string
	)

	it.Before(func() {
		path = filepath.Join(t.TempDir(), "group.toml")
	})

	it("reads the ordered buildpacks with their APIs and ignores extensions", func() {
		Expect(os.WriteFile(path, []byte(`
[[group]]
  id = "a/one"
  version = "1.0.0"
  api = "0.8"

[[group]]
  id = "pid1-buildpacks/init"
  version = "0.1.0"
  api = "0.10"
  homepage = "https://example.com"

[[group-extensions]]
  id = "ext"
  version = "1"
  api = "0.10"
`), 0644)).To(Succeed())

		group, err := launch.ReadGroup(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(group).To(Equal([]launch.GroupEntry{
			{ID: "a/one", Version: "1.0.0", API: "0.8"},
			{ID: "pid1-buildpacks/init", Version: "0.1.0", API: "0.10"},
		}))
	})

	it("rejects an entry without id", func() {
		Expect(os.WriteFile(path, []byte("[[group]]\nversion = \"1\"\n"), 0644)).To(Succeed())
		_, err := launch.ReadGroup(path)
		Expect(err).To(MatchError(ContainSubstring(path + ": a group entry has no id")))
	})

	it("escapes ids the way the lifecycle does", func() {
		Expect(launch.EscapeID("pid1-buildpacks/init")).To(Equal("pid1-buildpacks_init"))
		Expect(launch.EscapeID("a/b/c")).To(Equal("a_b_c"))
	})
}
