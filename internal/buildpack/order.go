package buildpack

import (
	"fmt"
	"strings"

	"github.com/pid1-buildpacks/init/internal/config"
)

// requireLast handles the buildpacks that come after this one in the group (later), whose
// process types it cannot wrap. On a builder that locks BP_INIT_ENABLED, and so enforces the
// init, it is an error in one line naming them; elsewhere a warning naming them.
//
// The lifecycle appends a [system.post] buildpack only to groups that do not already hold it: an
// app developer's order that names the init before other buildpacks (pack build --buildpack
// <init> --buildpack <other>) runs it there instead of last.
func (b Build) requireLast(ownID string, later []string) error {
	if len(later) == 0 {
		return nil
	}
	ids := strings.Join(later, ", ")
	lock, locked, err := config.EnabledLock(b.BuildConfigDir)
	if err != nil {
		return err
	}
	if locked {
		return fmt.Errorf("%s must be the last buildpack of the group, but %s come after it: their process types would start without the init, which this builder enforces (%s); list %s last", ownID, ids, lock, ownID)
	}
	b.warn(fmt.Sprintf("%s is not the last buildpack of the group: process types of %s will not be wrapped; list it last in every group", ownID, ids))
	return nil
}
