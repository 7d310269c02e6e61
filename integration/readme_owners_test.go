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

// testBuilderOwnersReadme checks that the README's builder-owner and audit snippets are the files and the
// commands the tests use (issue 7): the builder.toml files are quoted as they are, and the
// commands run as written, from the repository root, with the exit code their comment gives.
func testBuilderOwnersReadme(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	var readme string
	it.Before(func() {
		data, err := os.ReadFile(filepath.Join(settings.Root, "README.md"))
		Expect(err).NotTo(HaveOccurred())
		readme = string(data)
	})

	it("quotes examples/builder.toml, examples/lock.toml and examples/builder-last-in-every-group.toml as they are", func() {
		owners := readmeSectionOf(t, readme, "### Builder owners")
		for _, name := range []string{"builder.toml", "lock.toml", "builder-last-in-every-group.toml"} {
			data, err := os.ReadFile(filepath.Join(settings.Root, "examples", name))
			Expect(err).NotTo(HaveOccurred())
			Expect(owners).To(ContainSubstring("```toml\n"+string(data)+"```"), name)
		}
	})

	it("runs the commands of the Builder owners and Audit sections as written", func() {
		// The Audit section builds pid1-it/sys-readme; the suite's shared images must stay.
		t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", "pid1-it/sys-readme").Run() })
		for _, heading := range []string{"### Builder owners", "## Audit"} {
			runDocCommands(t, firstShellBlock(t, readmeSectionOf(t, readme, heading)))
		}
	})
}

// testPlatformsDoc checks docs/platforms.md as testBuilderOwnersReadme checks the README: it
// quotes examples/builder-everywhere.toml as it is, its commands run as written with the exit
// code their comment gives, and the build lines it quotes are those the tests see.
func testPlatformsDoc(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	var doc string
	it.Before(func() {
		data, err := os.ReadFile(filepath.Join(settings.Root, "docs", "platforms.md"))
		Expect(err).NotTo(HaveOccurred())
		doc = string(data)
	})

	it("quotes examples/builder-everywhere.toml as it is, and the trap's warning and error as the builds print them", func() {
		data, err := os.ReadFile(filepath.Join(settings.Root, "examples", "builder-everywhere.toml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(doc).To(ContainSubstring("```toml\n" + string(data) + "```"))
		Expect(doc).To(ContainSubstring("```\n  " + initFirstWarning + "\n```"))
		Expect(doc).To(ContainSubstring("```\n  " + initFirstError + "\n```"))
	})

	it("runs its commands as written", func() {
		runDocCommands(t, firstShellBlock(t, doc))
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

// readmeSectionOf returns the README text from heading to the next heading of the same or a higher
// level.
func readmeSectionOf(t *testing.T, readme, heading string) string {
	t.Helper()
	start := strings.Index(readme, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	level := strings.Repeat("#", strings.Index(heading, " "))
	rest := readme[start+1+len(heading):]
	end := len(rest)
	for _, h := range regexp.MustCompile(`(?m)^#{1,`+strconv.Itoa(len(level))+`} `).FindAllStringIndex(rest, -1) {
		if !inFence(rest[:h[0]]) {
			end = h[0]
			break
		}
	}
	return rest[:end]
}

func inFence(text string) bool { return strings.Count(text, "```")%2 == 1 }

// firstShellBlock returns the command lines of the first ```sh block of text.
func firstShellBlock(t *testing.T, text string) []string {
	t.Helper()
	start := strings.Index(text, "```sh\n")
	if start < 0 {
		t.Fatalf("no ```sh block in:\n%s", text)
	}
	body := text[start+len("```sh\n"):]
	body = body[:strings.Index(body, "```")]
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}
