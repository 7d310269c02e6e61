package buildpack_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/rewrite"
)

func testBuild(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		w      *workspace
	)

	it.Before(func() {
		w = newWorkspace(t)
	})

	// allFormats writes a group with one earlier buildpack per Buildpack API format.
	allFormats := func() {
		w.group([2]string{"bp/api07", "0.7"}, [2]string{"bp/api08", "0.8"}, [2]string{"bp/api09", "0.9"},
			[2]string{"bp/api010", "0.10"}, [2]string{"bp/tini", "0.10"}, [2]string{ownID, "0.10"})
		w.launch("bp/api07", `
[[processes]]
  type = "web"
  command = "old-web"
  args = ["a"]
  direct = true
  working-dir = "/ignored"

[[processes]]
  type = "legacy"
  command = "/workspace/run"
  direct = true
  working-dir = "/ignored"
`)
		w.launch("bp/api08", `
[[processes]]
  type = "worker"
  command = "python"
  args = ["worker.py", "--queue", "default"]
  direct = true
  default = true
  working-dir = "/workspace/jobs"

[[processes]]
  type = "task"
  command = "echo $HOME"
`)
		w.launch("bp/api09", `
[[processes]]
  type = "cli"
  command = ["node", "cli.js"]
  args = ["--help"]
`)
		w.launch("bp/api010", `
[[processes]]
  type = "web"
  command = ["java"]
  args = ["-jar", "app.jar"]
  working-dir = "/workspace/sub"
`)
		w.launch("bp/tini", `
[[processes]]
  type = "supervised"
  command = ["tini", "--", "server"]
`)
	}

	it("wraps the process types of every Buildpack API format, merged as the lifecycle merges them", func() {
		allFormats()

		out, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())

		processes, ok := w.processes()
		Expect(ok).To(BeTrue())
		Expect(processes).To(Equal([]writtenProcess{
			{Type: "cli", Command: []string{w.initPath, "--", "node", "cli.js"}, Args: []string{"--help"}},
			{Type: "legacy", Command: []string{w.initPath, "--", "/workspace/run"}},
			{Type: "task", Command: []string{w.initPath, "--", "/bin/bash", "-c",
				rewrite.ShellScript("task", "", rewrite.Image{LayersDir: w.layersRoot, AppDir: w.appDir(), Group: []string{"bp/api07", "bp/api08", "bp/api09", "bp/api010", "bp/tini", ownID}}), "/cnb/process/task", "echo $HOME"}},
			{Type: "web", Command: []string{w.initPath, "--", "java"}, Args: []string{"-jar", "app.jar"}, WorkingDirectory: "/workspace/sub"},
			{Type: "worker", Command: []string{w.initPath, "--", "python", "worker.py", "--queue", "default"},
				WorkingDirectory: "/workspace/jobs", Default: true},
		}))

		Expect(out).To(ContainSubstring("PID 1 Init Buildpack 0.1.0"))
		Expect(out).To(ContainSubstring("Build Configuration:"))
		Expect(out).To(MatchRegexp(`\$BP_INIT_PROCESS_TYPES +\* +the process types to wrap`))
		Expect(out).To(ContainSubstring("Launch Configuration:"))
		Expect(out).To(ContainSubstring("$BPL_INIT_GRACE_PERIOD"))
		Expect(out).To(ContainSubstring("PID 1 init: Contributing to layer"))
		Expect(out).To(ContainSubstring("web: java -jar app.jar\n"))
		Expect(out).To(ContainSubstring("     becomes " + w.initPath + " -- java -jar app.jar\n"))
		Expect(out).To(ContainSubstring(`task: "echo $HOME"` + "\n"))
		Expect(out).To(ContainSubstring(`becomes ` + w.initPath + ` -- /bin/bash -c <the launcher's bash script: profile.d, .profile, cd> /cnb/process/task "echo $HOME"`))
		Expect(out).NotTo(ContainSubstring("no longer sourced"))
		Expect(out).To(ContainSubstring("supervised: already starts with tini, not wrapped twice: tini -- server"))
		Expect(out).To(ContainSubstring(`working-dir is not supported by Buildpack API 0.7`))

		layer, err := os.ReadFile(filepath.Join(w.layersDir, "init", "sbin", "init"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(layer)).To(Equal("fake init for " + runtime.GOARCH))
		var layerTOML struct {
			Types    map[string]bool        `toml:"types"`
			Metadata map[string]interface{} `toml:"metadata"`
		}
		_, err = toml.DecodeFile(filepath.Join(w.layersDir, "init.toml"), &layerTOML)
		Expect(err).NotTo(HaveOccurred())
		Expect(layerTOML.Types).To(Equal(map[string]bool{"launch": true, "build": false, "cache": false}))
		Expect(layerTOML.Metadata).To(HaveKey("sha256"))
		Expect(layerTOML.Metadata).To(HaveKeyWithValue("path", "sbin/init"), "a layer of an earlier version, with bin/init, is not reused")
		Expect(filepath.Join(w.layersDir, "init.sbom.cdx.json")).To(BeARegularFile())
		Expect(filepath.Join(w.layersDir, "init.sbom.syft.json")).To(BeARegularFile())
	})

	it("leaves a type with an empty command as is, with a warning, and wraps the others", func() {
		w.group([2]string{"a/one", "0.10"}, [2]string{ownID, "0.10"})
		w.launch("a/one", "[[processes]]\ntype = \"empty\"\ncommand = []\n[[processes]]\ntype = \"missing\"\n[[processes]]\ntype = \"web\"\ncommand = [\"w\"]\n")

		out, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		processes, _ := w.processes()
		Expect(processes).To(Equal([]writtenProcess{{Type: "web", Command: []string{w.initPath, "--", "w"}}}))
		Expect(out).To(ContainSubstring(`Warning: process type "empty" of a/one has an empty command: left as is`))
		Expect(out).To(ContainSubstring(`Warning: process type "missing" of a/one has an empty command: left as is`))
		Expect(out).To(ContainSubstring("below Platform API 0.10 the lifecycle's builder fails on it"), "lifecycle 0.21.11's launch.Process.WithPlatformAPI panics on it")
	})

	it("moves a shell process's working-dir into its script, where bash changes to it after the profiles", func() {
		w.group([2]string{"a/one", "0.8"}, [2]string{"b/two", "0.10"}, [2]string{ownID, "0.10"}, [2]string{"c/later", "0.10"})
		w.launch("a/one", "[[processes]]\ntype = \"task\"\ncommand = \"make\"\nworking-dir = \"$HOME/src\"\n")

		_, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		processes, _ := w.processes()
		Expect(processes).To(Equal([]writtenProcess{{Type: "task", Command: []string{w.initPath, "--", "/bin/bash", "-c",
			rewrite.ShellScript("task", "$HOME/src", rewrite.Image{LayersDir: w.layersRoot, AppDir: w.appDir(), Group: []string{"a/one", "b/two", ownID, "c/later"}}), "/cnb/process/task", "make"}}}))
	})

	it("reuses the layer on a second build with the same init, and writes the same launch.toml", func() {
		allFormats()
		_, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		first, _ := w.processes()
		firstTOML, err := os.ReadFile(filepath.Join(w.layersDir, "init.toml"))
		Expect(err).NotTo(HaveOccurred())

		// What the lifecycle leaves of a launch-only layer for the next build: init.toml only.
		Expect(os.RemoveAll(filepath.Join(w.layersDir, "init"))).To(Succeed())
		Expect(os.Remove(filepath.Join(w.layersDir, "launch.toml"))).To(Succeed())

		out, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("PID 1 init: Reusing cached layer"))
		Expect(filepath.Join(w.layersDir, "init")).NotTo(BeADirectory())
		Expect(os.ReadFile(filepath.Join(w.layersDir, "init.toml"))).To(Equal(firstTOML))
		second, _ := w.processes()
		Expect(second).To(Equal(first))
	})

	it("recognises our init at its former path and tini in the image, and wraps an app file named tini", func() {
		app, err := os.Getwd() // libcnb's application directory
		Expect(err).NotTo(HaveOccurred())
		former := filepath.Join(w.layersDir, "init", "bin", "init")
		w.group([2]string{"a/one", "0.10"}, [2]string{ownID, "0.10"})
		w.launch("a/one", `
[[processes]]
  type = "old"
  command = ["`+former+`", "--", "server"]
[[processes]]
  type = "released"
  command = ["/usr/local/bin/tini-static-amd64", "--", "server"]
[[processes]]
  type = "app"
  command = ["`+filepath.Join(app, "tini")+`", "serve"]
`)

		out, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		processes, _ := w.processes()
		Expect(processes).To(Equal([]writtenProcess{{Type: "app", Command: []string{w.initPath, "--", filepath.Join(app, "tini"), "serve"}}}))
		Expect(out).To(ContainSubstring("old: already starts with " + former + ", not wrapped twice"))
		Expect(out).To(ContainSubstring("released: already starts with tini-static-amd64, not wrapped twice"))
	})

	it("keeps a default that a later buildpack did not override, and drops one that it did", func() {
		w.group([2]string{"a/one", "0.10"}, [2]string{"b/two", "0.10"}, [2]string{ownID, "0.10"})
		w.launch("a/one", "[[processes]]\ntype = \"web\"\ncommand = [\"first\"]\ndefault = true\n[[processes]]\ntype = \"worker\"\ncommand = [\"w1\"]\n")
		w.launch("b/two", "[[processes]]\ntype = \"worker\"\ncommand = [\"w2\"]\nargs = [\"x\"]\n")

		_, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		processes, _ := w.processes()
		Expect(processes).To(Equal([]writtenProcess{
			{Type: "web", Command: []string{w.initPath, "--", "first"}, Default: true},
			{Type: "worker", Command: []string{w.initPath, "--", "w2"}, Args: []string{"x"}},
		}))

		w.launch("b/two", "[[processes]]\ntype = \"web\"\ncommand = [\"second\"]\n")
		_, exit = w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		processes, _ = w.processes()
		Expect(processes).To(Equal([]writtenProcess{
			{Type: "web", Command: []string{w.initPath, "--", "second"}},
			{Type: "worker", Command: []string{w.initPath, "--", "w1"}},
		}))
	})

	it("wraps only the types BP_INIT_PROCESS_TYPES names and warns about a type nobody defines", func() {
		t.Setenv("BP_INIT_PROCESS_TYPES", "web,missing")
		w.group([2]string{"a/one", "0.10"}, [2]string{ownID, "0.10"})
		w.launch("a/one", "[[processes]]\ntype = \"web\"\ncommand = [\"w\"]\n[[processes]]\ntype = \"worker\"\ncommand = [\"k\"]\n")

		out, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		processes, _ := w.processes()
		Expect(processes).To(Equal([]writtenProcess{{Type: "web", Command: []string{w.initPath, "--", "w"}}}))
		Expect(out).To(ContainSubstring("worker: not selected by BP_INIT_PROCESS_TYPES, left as is"))
		Expect(out).To(ContainSubstring(`Warning: BP_INIT_PROCESS_TYPES names process type "missing", which no earlier buildpack defines`))
	})

	it("leaves a process with exec-env as is and says why", func() {
		w.group([2]string{"a/one", "0.12"}, [2]string{ownID, "0.10"})
		w.launch("a/one", "[[processes]]\ntype = \"web\"\ncommand = [\"w\"]\nexec-env = [\"production\"]\n")

		out, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		_, ok := w.processes()
		Expect(ok).To(BeFalse())
		Expect(out).To(ContainSubstring(`Warning: process type "web" has exec-env [production], which Buildpack API 0.10 cannot declare: left as is`))
	})

	it("says there is nothing to wrap and succeeds when no buildpack defines a process type", func() {
		w.group([2]string{"a/one", "0.10"}, [2]string{ownID, "0.10"})

		out, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("No process types defined by earlier buildpacks: nothing to wrap"))
		_, ok := w.processes()
		Expect(ok).To(BeFalse())
		Expect(filepath.Join(w.layersDir, "init", "sbin", "init")).To(BeARegularFile())
	})

	it("falls back to the launch.toml files present when group.toml is missing, warning about duplicates", func() {
		first := w.launch("a/one", "[[processes]]\ntype = \"web\"\ncommand = \"one\"\ndirect = true\nargs = [\"x\"]\n")
		second := w.launch("b/two", "[[processes]]\ntype = \"web\"\ncommand = [\"two\"]\n")

		out, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("group.toml not found"))
		Expect(out).To(ContainSubstring(`process type "web" is defined in ` + first + ` and in ` + second))
		processes, _ := w.processes()
		Expect(processes).To(Equal([]writtenProcess{{Type: "web", Command: []string{w.initPath, "--", "two"}}}))
	})

	it("warns that later buildpacks' process types will not be wrapped when it is not last", func() {
		w.group([2]string{"a/one", "0.10"}, [2]string{ownID, "0.10"}, [2]string{"z/late", "0.10"})
		w.launch("a/one", "[[processes]]\ntype = \"web\"\ncommand = [\"w\"]\n")

		out, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("Warning: pid1-buildpacks/init is not the last buildpack of the group: process types of z/late will not be wrapped"))
		processes, _ := w.processes()
		Expect(processes).To(Equal([]writtenProcess{{Type: "web", Command: []string{w.initPath, "--", "w"}}}))
	})

	it("fails in one line naming the later buildpacks when the builder locks BP_INIT_ENABLED", func() {
		w.group([2]string{ownID, "0.10"}, [2]string{"z/late", "0.10"}, [2]string{"z/later", "0.10"})
		w.write(filepath.Join(w.buildConfig, "env", "BP_INIT_ENABLED.override"), "true")

		out, exit := w.build()
		Expect(exit.err).To(MatchError("pid1-buildpacks/init must be the last buildpack of the group, but z/late, z/later come after it: " +
			"their process types would start without the init, which this builder enforces (" +
			filepath.Join(w.buildConfig, "env", "BP_INIT_ENABLED.override") + "); list pid1-buildpacks/init last"))
		Expect(out).NotTo(ContainSubstring("Warning"))
		_, written := w.processes()
		Expect(written).To(BeFalse())
	})

	// The lifecycle applies an unsuffixed build-config env file as a default (env.WithOverrides
	// in lifecycle 0.21.11), so only the override suffix wins over the app developer's value.
	it("only warns when the builder sets BP_INIT_ENABLED in the build-config env without the override suffix", func() {
		for _, name := range []string{"BP_INIT_ENABLED", "BP_INIT_ENABLED.default", "BP_INIT_ENABLED.append", "BP_INIT_ENABLED.prepend", "BP_INIT_ENABLED.delim"} {
			w := newWorkspace(t)
			w.group([2]string{ownID, "0.10"}, [2]string{"z/late", "0.10"})
			w.write(filepath.Join(w.buildConfig, "env", name), "true")

			out, exit := w.build()
			Expect(exit.err).NotTo(HaveOccurred(), name)
			Expect(out).To(ContainSubstring("Warning: pid1-buildpacks/init is not the last buildpack of the group: process types of z/late will not be wrapped"), name)
		}
	})

	it("builds when the builder locks BP_INIT_ENABLED and it is last", func() {
		w.group([2]string{"a/one", "0.10"}, [2]string{ownID, "0.10"})
		w.launch("a/one", "[[processes]]\ntype = \"web\"\ncommand = [\"w\"]\n")
		w.write(filepath.Join(w.buildConfig, "env", "BP_INIT_ENABLED.override"), "true")

		_, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		processes, _ := w.processes()
		Expect(processes).To(Equal([]writtenProcess{{Type: "web", Command: []string{w.initPath, "--", "w"}}}))
	})

	it("contributes nothing and leaves every process type as is when BP_INIT_ENABLED is false, saying so in one line", func() {
		for _, value := range []string{"false", " FALSE "} {
			t.Setenv("BP_INIT_ENABLED", value)
			w.group([2]string{"a/one", "0.10"}, [2]string{ownID, "0.10"})
			w.launch("a/one", "[[processes]]\ntype = \"web\"\ncommand = [\"w\"]\n")

			out, exit := w.build()
			Expect(exit.err).NotTo(HaveOccurred())
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				// Title prints the name and version, then the homepage.
				if !strings.Contains(l, "PID 1 Init Buildpack") && !strings.Contains(l, "https://") {
					lines = append(lines, strings.TrimSpace(l))
				}
			}
			Expect(lines).To(Equal([]string{"BP_INIT_ENABLED is false: no init contributed, every process type left as is"}), value)
			_, ok := w.processes()
			Expect(ok).To(BeFalse(), "no launch.toml written")
			Expect(filepath.Join(w.layersDir, "init")).NotTo(BeADirectory())
			Expect(filepath.Join(w.layersDir, "init.toml")).NotTo(BeAnExistingFile())
		}
	})

	it("uses the init built for the target architecture when it differs from the build's", func() {
		other := "arm64"
		if runtime.GOARCH == "arm64" {
			other = "amd64"
		}
		t.Setenv("CNB_TARGET_ARCH", other)
		w.write(filepath.Join(w.buildpack, "linux", other, "bin", "init"), "fake init for "+other)

		_, exit := w.build()
		Expect(exit.err).NotTo(HaveOccurred())
		Expect(os.ReadFile(filepath.Join(w.layersDir, "init", "sbin", "init"))).To(Equal([]byte("fake init for " + other)))
	})

	type failure struct {
		name     string
		setup    func()
		expected []string
	}
	for _, tc := range []failure{
		{
			name:     "BP_INIT_ENABLED=maybe",
			setup:    func() { t.Setenv("BP_INIT_ENABLED", "maybe") },
			expected: []string{`invalid BP_INIT_ENABLED "maybe": expected true or false`},
		},
		{
			name:     "a bad BP_INIT_PROCESS_TYPES",
			setup:    func() { t.Setenv("BP_INIT_PROCESS_TYPES", "web;worker") },
			expected: []string{`invalid BP_INIT_PROCESS_TYPES "web;worker"`},
		},
		{
			name: "a launch.toml that is not TOML",
			setup: func() {
				w.group([2]string{"a/one", "0.10"}, [2]string{ownID, "0.10"})
				w.launch("a/one", "[[processes]\n")
			},
			expected: []string{"unable to read", filepath.Join("a_one", "launch.toml")},
		},
		{
			name: "a launch.toml in the wrong format for its API",
			setup: func() {
				w.group([2]string{"a/one", "0.8"}, [2]string{ownID, "0.10"})
				w.launch("a/one", "[[processes]]\ntype = \"web\"\ncommand = [\"w\"]\n")
			},
			expected: []string{filepath.Join("a_one", "launch.toml"), "command must be a string for Buildpack API 0.8"},
		},
		{
			name: "a launch.toml that cannot be read",
			setup: func() {
				w.group([2]string{"a/one", "0.10"}, [2]string{ownID, "0.10"})
				must(t, os.MkdirAll(filepath.Join(w.layersRoot, "a_one", "launch.toml"), 0755))
			},
			expected: []string{"unable to read", filepath.Join("a_one", "launch.toml")},
		},
		{
			name:     "a group.toml that is not TOML",
			setup:    func() { w.write(filepath.Join(w.layersRoot, "group.toml"), "[[group]\n") },
			expected: []string{"unable to read", "group.toml"},
		},
		{
			name:     "a missing init",
			setup:    func() { must(t, os.Remove(filepath.Join(w.buildpack, "bin", "init"))) },
			expected: []string{"unable to find the init for linux/" + runtime.GOARCH, "scripts/build.sh"},
		},
		{
			name:     "a target architecture without an init",
			setup:    func() { t.Setenv("CNB_TARGET_ARCH", "riscv64") },
			expected: []string{"unable to find the init for linux/riscv64", filepath.Join("linux", "riscv64", "bin", "init")},
		},
		{
			name:     "a target os other than linux",
			setup:    func() { t.Setenv("CNB_TARGET_OS", "windows") },
			expected: []string{`unable to provide an init for target os "windows": only linux is supported`},
		},
	} {
		tc := tc
		it("fails the build for "+tc.name, func() {
			tc.setup()
			_, exit := w.build()
			Expect(exit.err).To(HaveOccurred())
			for _, s := range tc.expected {
				Expect(exit.err.Error()).To(ContainSubstring(s))
			}
			_, ok := w.processes()
			Expect(ok).To(BeFalse())
		})
	}
}
