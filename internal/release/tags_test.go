package release_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/release"
	"github.com/pid1-buildpacks/init/internal/tabletest"
)

func testTags(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	cases := map[string]struct {
		version  string
		existing []string
		want     []string
	}{
		"first release":                                   {"0.1.0", nil, []string{"0.1.0", "0.1", "0", "latest"}},
		"a newer patch":                                   {"0.1.1", []string{"0.1.0", "0.1", "0", "latest"}, []string{"0.1.1", "0.1", "0", "latest"}},
		"the same version again":                          {"0.1.0", []string{"0.1.0", "0.1", "0", "latest"}, []string{"0.1.0", "0.1", "0", "latest"}},
		"a patch of an older minor":                       {"0.1.2", []string{"0.1.1", "0.2.0"}, []string{"0.1.2", "0.1"}},
		"a patch of the newest minor of an older major":   {"1.5.1", []string{"1.4.0", "1.5.0", "2.0.0"}, []string{"1.5.1", "1.5", "1"}},
		"an older patch":                                  {"0.1.0", []string{"0.1.1"}, []string{"0.1.0"}},
		"a pre-release moves its own tag only":            {"1.0.0-rc.1", []string{"0.9.0"}, []string{"1.0.0-rc.1"}},
		"a pre-release of a newer version is no obstacle": {"0.2.0", []string{"0.3.0-rc.1", "nightly"}, []string{"0.2.0", "0.2", "0", "latest"}},
	}
	for name, c := range tabletest.Sorted(cases) {
		it(name, func() {
			Expect(release.Tags(c.version, c.existing)).To(Equal(c.want))
		})
	}

	for _, bad := range []string{"", "1", "1.2", "v1.2.3", "01.2.3", "1.2.3.4", "latest"} {
		it("refuses version "+`"`+bad+`"`, func() {
			_, err := release.Tags(bad, nil)
			Expect(err).To(MatchError(ContainSubstring(`invalid version "` + bad + `": expected MAJOR.MINOR.PATCH`)))
		})
	}
}
