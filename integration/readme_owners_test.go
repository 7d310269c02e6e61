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
		exitComment := regexp.MustCompile(`#\s*exit (\d+)`)
		for _, name := range []string{"builder owners: commands", "audit: commands"} {
			for _, line := range commandLines(docSnippet(t, name)) {
				expected := 0
				if m := exitComment.FindStringSubmatch(line); m != nil {
					expected, _ = strconv.Atoi(m[1])
				}
				r := run(t, 5*time.Minute, nil, "bash", "-c", "cd "+settings.Root+" && "+line)
				t.Logf("%s\n-> exit %d\n%s", line, r.ExitCode, r.Output)
				Expect(r.ExitCode).To(Equal(expected), "%s\n%s", line, r.Output)
			}
		}
	})
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
