package kpack_test

import (
	stdcontext "context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	buildapi "github.com/pivotal/kpack/pkg/apis/build/v1alpha2"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const (
	initBuildpackID = "pid1-buildpacks/init"
	// marker precedes the kpack manifests' code block in the documentation.
	marker = "<!-- test: kpack -->"
	// placeholderDigest is how the manifests name the digest scripts/publish.sh prints; a digest
	// of the right form stands in for it, since kpack validates the image references.
	placeholderDigest = "sha256:<digest>"
)

func TestKpack(t *testing.T) {
	suite := spec.New("kpack", spec.Report(report.Terminal{}))
	suite("Manifests", testManifests)
	suite.Run(t)
}

// documentedManifests returns the code block after the kpack marker, from README.md or the
// docs/*.md file that holds it, and that file's name; the marker must appear exactly once.
func documentedManifests(t *testing.T) (string, string) {
	t.Helper()
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	block := regexp.MustCompile("(?s)" + regexp.QuoteMeta(marker) + "\n```yaml\n(.*?)```")
	var found []string
	var manifests string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("unable to read %s: %v", f, err)
		}
		for _, m := range block.FindAllSubmatch(data, -1) {
			found = append(found, f)
			manifests = string(m[1])
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s followed by a ```yaml block in README.md and docs/*.md, found %d: %v", marker, len(found), found)
	}
	return manifests, found[0]
}

// decodeStrict decodes one YAML document into v as the API server would, refusing fields that v
// does not declare.
func decodeStrict(doc string, v any) error {
	return yaml.UnmarshalStrict([]byte(doc), v)
}

// manifests are the documented ClusterStore and ClusterBuilder, decoded strictly.
type manifests struct {
	Store   buildapi.ClusterStore
	Builder buildapi.ClusterBuilder
}

// decodeManifests splits text into its YAML documents and decodes the ClusterStore and the
// ClusterBuilder into kpack's v1alpha2 types; any other document, or a field those types do not
// have, is an error.
func decodeManifests(text string) (manifests, error) {
	var m manifests
	var kinds []string
	for _, doc := range strings.Split(text, "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return m, err
		}
		if meta.APIVersion != buildapi.SchemeGroupVersion.String() {
			return m, fmt.Errorf("%s %q: expected apiVersion %s", meta.Kind, meta.APIVersion, buildapi.SchemeGroupVersion)
		}
		var err error
		switch meta.Kind {
		case buildapi.ClusterStoreKind:
			err = decodeStrict(doc, &m.Store)
		case buildapi.ClusterBuilderKind:
			err = decodeStrict(doc, &m.Builder)
		default:
			err = fmt.Errorf("unexpected kind %q", meta.Kind)
		}
		if err != nil {
			return m, fmt.Errorf("%s: %v", meta.Kind, err)
		}
		kinds = append(kinds, meta.Kind)
	}
	if strings.Join(kinds, ",") != buildapi.ClusterStoreKind+","+buildapi.ClusterBuilderKind {
		return m, fmt.Errorf("expected a ClusterStore then a ClusterBuilder, got %v", kinds)
	}
	return m, nil
}

func testManifests(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	var text, file string
	it.Before(func() {
		text, file = documentedManifests(t)
		Expect(text).To(ContainSubstring(placeholderDigest))
		text = strings.ReplaceAll(text, placeholderDigest, "sha256:"+strings.Repeat("0", 64))
	})

	it("decodes strictly into kpack's v1alpha2 ClusterStore and ClusterBuilder, which kpack's validation accepts", func() {
		m, err := decodeManifests(text)
		Expect(err).NotTo(HaveOccurred(), file)

		m.Store.SetDefaults(stdcontext.Background())
		Expect(m.Store.Validate(stdcontext.Background())).To(BeNil(), "ClusterStore of %s", file)
		m.Builder.SetDefaults(stdcontext.Background())
		Expect(m.Builder.Validate(stdcontext.Background())).To(BeNil(), "ClusterBuilder of %s", file)

		Expect(m.Builder.Spec.Store.Kind).To(Equal(buildapi.ClusterStoreKind))
		Expect(m.Builder.Spec.Store.Name).To(Equal(m.Store.Name), "the ClusterBuilder uses the documented ClusterStore")
		var images []string
		for _, s := range m.Store.Spec.Sources {
			images = append(images, s.Image)
		}
		Expect(images).To(ContainElement(MatchRegexp(`/pid1-buildpacks/init@sha256:`)))

		Expect(m.Builder.Spec.Order).NotTo(BeEmpty())
		for i, o := range m.Builder.Spec.Order {
			Expect(o.Group).NotTo(BeEmpty(), "group %d", i+1)
			last := o.Group[len(o.Group)-1]
			Expect(last.Id).To(Equal(initBuildpackID), "group %d ends with the init", i+1)
			for _, bp := range o.Group[:len(o.Group)-1] {
				Expect(bp.Id).NotTo(Equal(initBuildpackID), "group %d names the init once, last", i+1)
			}
		}
	})

	// What matching strings let through and kpack's types do not.
	it("refuses a misspelt field, a field of another kind and a wrong kind", func() {
		for _, c := range []struct{ what, from, to, want string }{
			{"a misspelt optional", "optional: true", "optinal: true", `unknown field "optinal"`},
			{"a Builder's serviceAccountName in a ClusterBuilder", "  serviceAccountRef:\n", "  serviceAccountName: kpack-builder\n  serviceAccountRef:\n", `unknown field "serviceAccountName"`},
			{"order under store", "  store:\n    kind: ClusterStore\n", "  store:\n    order: []\n    kind: ClusterStore\n", `unknown field "order"`},
			{"a wrong kind", "kind: ClusterBuilder", "kind: Builderr", `unexpected kind "Builderr"`},
		} {
			Expect(text).To(ContainSubstring(c.from), c.what)
			_, err := decodeManifests(strings.Replace(text, c.from, c.to, 1))
			Expect(err).To(MatchError(ContainSubstring(c.want)), c.what)
		}
	})
}
