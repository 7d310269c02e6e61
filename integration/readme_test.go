package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// docSnippet returns the code block that follows `<!-- test: NAME -->` in README.md or in one of
// docs/*.md, wherever the snippet lives: the tests run the documentation's snippets, not copies of
// them. A name marked nowhere, or more than once, fails the test.
func docSnippet(t *testing.T, name string) string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(settings.Root, "docs", "*.md"))
	if err != nil {
		t.Fatalf("unable to list docs/*.md: %v", err)
	}
	marked := regexp.MustCompile("(?s)<!-- test: " + regexp.QuoteMeta(name) + " -->\n```[a-z]*\n(.*?)```")
	var snippet string
	var places []string
	for _, file := range append([]string{filepath.Join(settings.Root, "README.md")}, docs...) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("unable to read %s: %v", file, err)
		}
		for _, m := range marked.FindAllSubmatch(text, -1) {
			snippet = string(m[1])
			places = append(places, strings.TrimPrefix(file, settings.Root+string(filepath.Separator)))
		}
	}
	switch len(places) {
	case 0:
		t.Fatalf("no snippet marked <!-- test: %s --> followed by a code block in README.md or docs/*.md", name)
	case 1:
	default:
		t.Fatalf("the snippet name <!-- test: %s --> is marked %d times (%s): expected one snippet per name", name, len(places), strings.Join(places, ", "))
	}
	return snippet
}

// runSnippet runs a shell snippet of the documentation with bash in the repository root, with
// pack on PATH as after `source .tools/env`.
func runSnippet(t *testing.T, snippet string) result {
	t.Helper()
	path := "PATH=" + filepath.Dir(settings.Pack) + string(os.PathListSeparator) + os.Getenv("PATH")
	return run(t, 5*time.Minute, []string{path}, "bash", "-euo", "pipefail", "-c", "cd "+settings.Root+"\n"+snippet)
}

// sampleBuilderTOML is a builder.toml with the sample app buildpacks, initPart (the init
// buildpack's [[buildpacks]] entry and maybe [system]) and, when initInOrder, the init buildpack
// last and optional in every group.
func sampleBuilderTOML(initPart string, initInOrder bool) string {
	group := ""
	if initInOrder {
		group = "\n  [[order.group]]\n    id = \"" + initBuildpackID + "\"\n    optional = true\n"
	}
	testdata := filepath.Join(settings.Root, "integration", "testdata", "buildpacks")
	return `[[buildpacks]]
  uri = "` + filepath.Join(testdata, "legacy") + `"

[[buildpacks]]
  uri = "` + filepath.Join(testdata, "processes") + `"

` + initPart + `

[[order]]
  [[order.group]]
    id = "samples/legacy"
  [[order.group]]
    id = "samples/processes"
` + group + `
[[order]]
  [[order.group]]
    id = "samples/processes"
` + group + `
[build]
  image = "pid1-buildpacks/build:busybox"

[[run.images]]
  image = "pid1-buildpacks/run:busybox"

[lifecycle]
  uri = "` + filepath.Join(settings.Root, ".tools", "lifecycle.tgz") + `"

[[targets]]
  os = "linux"
  arch = "` + dockerArch() + `"
`
}

// createBuilder writes config to dir/builder.toml and runs pack builder create name from the
// working directory cwd, with --pull-policy if-not-present unless extra says otherwise.
func createBuilder(t *testing.T, name, dir, cwd, config string, extra ...string) result {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "builder.toml")
	if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"builder", "create", name, "--config", file, "--pull-policy", "if-not-present"}, extra...)
	r := runIn(t, cwd, 5*time.Minute, settings.Pack, args...)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", name).Run() })
	return r
}

// runIn is run with the working directory dir.
func runIn(t *testing.T, dir string, timeout time.Duration, name string, args ...string) result {
	t.Helper()
	script := `cd "$1" && shift && exec "$@"`
	return run(t, timeout, nil, "bash", append([]string{"-c", script, "bash", dir, name}, args...)...)
}

func dockerArch() string {
	return strings.TrimSpace(string(must(exec.Command("docker", "version", "--format", "{{.Server.Arch}}").Output())))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// testReadme runs the README's snippets for app developers that use the .cnb, and checks what
// it says about relative uris (issue 8). docSnippet is how every test of a snippet finds it.
func testReadme(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("runs the App developers snippet as written: pack build --buildpack from=builder --buildpack build/init-buildpack.cnb", func() {
		image := "pid1-it/readme-cnb:latest"
		snippet := docSnippet(t, "pack build --buildpack .cnb")
		Expect(snippet).To(HavePrefix("pack build my-app "))
		r := runSnippet(t, strings.Replace(snippet, "my-app", image, 1))
		t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
		Expect(r.ExitCode).To(Equal(0), r.Output)
		expectWrapped(t, image)
	})

	it("resolves project.toml's relative uri from where pack runs, not from project.toml's folder; reads [[io.buildpacks.build.env]]", func() {
		app := t.TempDir()
		Expect(exec.Command("cp", "-a", settings.App+"/.", app).Run()).To(Succeed())
		Expect(os.WriteFile(filepath.Join(app, "project.toml"), []byte(docSnippet(t, "project.toml")), 0o644)).To(Succeed())
		image := "pid1-it/readme-project:latest"
		build := func(cwd string) result {
			return runIn(t, cwd, 5*time.Minute, settings.Pack, "build", image, "--builder", builderWithout, "--path", app,
				"--pull-policy", "never", "--trust-builder", "--trust-extra-buildpacks")
		}
		t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })

		fromRoot := build(settings.Root)
		Expect(fromRoot.ExitCode).To(Equal(0), fromRoot.Output)
		types := processesByType(t, image)
		Expect(types["web"].Command[0]).To(Equal(initPath), "BP_INIT_PROCESS_TYPES=web from [[io.buildpacks.build.env]]")
		Expect(types["worker"].Command[0]).NotTo(Equal(initPath), "only web is wrapped")

		fromApp := build(app)
		t.Logf("pack build from the app's folder: exit %d: %s", fromApp.ExitCode, lastLine(fromApp.Output))
		Expect(fromApp.ExitCode).NotTo(Equal(0))
		Expect(fromApp.Output).To(ContainSubstring("locating in registry: 'build/init-buildpack.cnb'"))
	})

	it("resolves builder.toml's relative uri from builder.toml's folder", func() {
		dir := t.TempDir()
		Expect(exec.Command("cp", filepath.Join(settings.Root, "build", "init-buildpack.cnb"), filepath.Join(dir, "init.cnb")).Run()).To(Succeed())
		r := createBuilder(t, "pid1-it/builder-relative", dir, settings.Root,
			sampleBuilderTOML("[[buildpacks]]\n  uri = \"init.cnb\"\n", true), "--pull-policy", "never")
		Expect(r.ExitCode).To(Equal(0), r.Output)
		_, err := os.Stat(filepath.Join(settings.Root, "init.cnb"))
		Expect(os.IsNotExist(err)).To(BeTrue(), "init.cnb is not where pack runs")
		order := docker(t, "image", "inspect", "--format", `{{index .Config.Labels "io.buildpacks.buildpack.order"}}`, "pid1-it/builder-relative")
		Expect(order).To(ContainSubstring(initBuildpackID))
	})
}

// lastLine is the last non-empty line of output.
func lastLine(output string) string {
	lines := strings.Split(strings.TrimSpace(output), "\n")
	return lines[len(lines)-1]
}
