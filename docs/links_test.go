package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
)

// TestLinks checks that every relative link of the README, the changelog and docs/*.md names a
// file of the repository and, with a #fragment, a heading of that file as GitHub anchors it: text
// moved between files must take its links along.
func TestLinks(t *testing.T) {
	spec.Run(t, "Links", testLinks, spec.Report(report.Terminal{}))
}

func testLinks(t *testing.T, context spec.G, it spec.S) {
	root := ".."
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatalf("unable to list docs/*.md: %v", err)
	}
	for _, file := range append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md")}, docs...) {
		it("resolves every relative link of "+filepath.ToSlash(strings.TrimPrefix(file, root+string(filepath.Separator))), func() {
			Expect := NewWithT(t).Expect
			text, err := os.ReadFile(file)
			Expect(err).NotTo(HaveOccurred())
			for _, link := range relativeLinks(string(text)) {
				path, fragment, _ := strings.Cut(link, "#")
				target := file
				if path != "" {
					target = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				}
				_, err := os.Stat(target)
				Expect(err).NotTo(HaveOccurred(), "%s links to %s: no such file", file, link)
				if fragment == "" || filepath.Ext(target) != ".md" {
					continue
				}
				headings, err := os.ReadFile(target)
				Expect(err).NotTo(HaveOccurred())
				Expect(anchors(string(headings))).To(ContainElement(fragment), "%s links to %s: %s has no heading with that anchor", file, link, target)
			}
		})
	}
}

var (
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	scheme       = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)
	heading      = regexp.MustCompile(`^#{1,6} (.+)$`)
	notInAnchor  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// relativeLinks returns the targets of the Markdown links of text outside code blocks that name
// no scheme (https:, mailto:).
func relativeLinks(text string) []string {
	var links []string
	for _, line := range outsideCode(text) {
		for _, m := range markdownLink.FindAllStringSubmatch(line, -1) {
			if !scheme.MatchString(m[1]) {
				links = append(links, m[1])
			}
		}
	}
	return links
}

// anchors returns the anchors GitHub gives the headings of text: lower case, punctuation other
// than '-' and '_' dropped, each space a '-', and -1, -2, ... after a repeated one.
func anchors(text string) []string {
	var list []string
	seen := map[string]int{}
	for _, line := range outsideCode(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		anchor := strings.ReplaceAll(notInAnchor.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-")
		if n := seen[anchor]; n > 0 {
			list = append(list, anchor+"-"+strconv.Itoa(n))
		} else {
			list = append(list, anchor)
		}
		seen[anchor]++
	}
	return list
}

// outsideCode returns the lines of text that are not in a fenced code block.
func outsideCode(text string) []string {
	var lines []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines = append(lines, line)
		}
	}
	return lines
}
