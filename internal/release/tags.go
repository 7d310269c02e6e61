package release

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// Tags returns the tags a release of version moves, in the order to move them: version itself,
// then MAJOR.MINOR, MAJOR and latest, each only when no release tag in existing is a higher
// version within its reach (publishing 0.1.1 after 0.2.0 moves 0.1 but not 0 or latest). A
// pre-release (1.0.0-rc.1) moves its own tag only. version must be MAJOR.MINOR.PATCH, optionally
// with a pre-release; tags in existing that are not such versions are ignored.
func Tags(version string, existing []string) ([]string, error) {
	v, err := semver.StrictNewVersion(version)
	if err != nil {
		return nil, fmt.Errorf("invalid version %q: expected MAJOR.MINOR.PATCH (semantic versioning): %w", version, err)
	}
	tags := []string{version}
	if v.Prerelease() != "" {
		return tags, nil
	}
	var newerMinor, newerMajor, newer bool
	for _, tag := range existing {
		e, err := semver.StrictNewVersion(tag)
		if err != nil || e.Prerelease() != "" || !e.GreaterThan(v) {
			continue
		}
		newer = true
		if e.Major() == v.Major() {
			newerMajor = true
			if e.Minor() == v.Minor() {
				newerMinor = true
			}
		}
	}
	if !newerMinor {
		tags = append(tags, fmt.Sprintf("%d.%d", v.Major(), v.Minor()))
	}
	if !newerMajor {
		tags = append(tags, fmt.Sprintf("%d", v.Major()))
	}
	if !newer {
		tags = append(tags, "latest")
	}
	return tags, nil
}
