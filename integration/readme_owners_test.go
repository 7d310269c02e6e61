package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testBuilderOwnersReadme checks that the builder-owner and audit snippets of the README and
// docs/ are the files and the commands the tests use (issue 7): the builder.toml files are quoted
// as they are, and the commands run as written, from the repository root, with the exit code
// their comment gives.
func testBuilderOwnersReadme(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("quotes examples/builder.toml, examples/lock.toml and examples/builder-last-in-every-group.toml as they are", func() {
		for _, name := range []string{"builder.toml", "lock.toml", "builder-last-in-every-group.toml"} {
			data, err := os.ReadFile(filepath.Join(settings.Root, "examples", name))
			Expect(err).NotTo(HaveOccurred())
			Expect(docSnippet(t, "examples/"+name)).To(Equal(string(data)), name)
		}
	})

	it("runs the commands of the Builder owners and Audit sections as written", func() {
		// The audit's commands build pid1-it/sys-readme; the suite's shared images must stay.
		t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", "pid1-it/sys-readme").Run() })
		for _, name := range []string{"builder owners: commands", "system builder: commands", "audit: commands"} {
			runDocCommands(t, commandLines(docSnippet(t, name)))
		}
	})
}

// testPlatformsDoc checks docs/platforms.md as testBuilderOwnersReadme checks the README: it
// quotes examples/builder-everywhere.toml as it is, its commands run as written with the exit
// code their comment gives, and the build lines it quotes are those the tests see.
func testPlatformsDoc(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("quotes examples/builder-everywhere.toml as it is, and the trap's warning and error as the builds print them", func() {
		data, err := os.ReadFile(filepath.Join(settings.Root, "examples", "builder-everywhere.toml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(docSnippet(t, "examples/builder-everywhere.toml")).To(Equal(string(data)))
		doc, err := os.ReadFile(filepath.Join(settings.Root, "docs", "platforms.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(doc)).To(ContainSubstring("```\n  " + initFirstWarning + "\n```"))
		Expect(string(doc)).To(ContainSubstring("```\n  " + initFirstError + "\n```"))
	})

	it("runs its commands as written", func() {
		runDocCommands(t, commandLines(docSnippet(t, "platforms: commands")))
	})
}

// runDocCommands runs each command line from the repository root and expects the exit code of
// its `# exit N` comment, or 0.
func runDocCommands(t *testing.T, lines []string) {
	t.Helper()
	Expect := NewWithT(t).Expect
	exitComment := regexp.MustCompile(`#\s*exit (\d+)`)
	for _, line := range lines {
		expected := 0
		if m := exitComment.FindStringSubmatch(line); m != nil {
			expected, _ = strconv.Atoi(m[1])
		}
		r := run(t, 5*time.Minute, nil, "bash", "-c", "cd "+settings.Root+" && "+line)
		t.Logf("%s\n-> exit %d\n%s", line, r.ExitCode, r.Output)
		Expect(r.ExitCode).To(Equal(expected), "%s\n%s", line, r.Output)
	}
}

// commandLines returns the lines of a shell snippet that are commands: neither blank nor
// comments.
func commandLines(snippet string) []string {
	var lines []string
	for _, l := range strings.Split(snippet, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}
