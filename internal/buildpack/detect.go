// Package buildpack holds the buildpack's detect and build functions.
package buildpack

import (
	"fmt"

	"github.com/buildpacks/libcnb/v2"
	"github.com/paketo-buildpacks/libpak/v2"
	"github.com/paketo-buildpacks/libpak/v2/log"

	"github.com/pid1-buildpacks/init/internal/config"
)

// Detect passes for every application, so that the buildpack can be listed last in every group
// and appended to every group as a system buildpack. It requires and provides nothing.
//
// BP_INIT_ENABLED=false passes detection too: build then contributes nothing. Failing detection
// would fail the whole build wherever the buildpack is a required member of the group (a system
// buildpack, pack build --buildpack, project.toml).
//
// A configuration value that is not accepted passes detection as well, so that build fails with
// the error: the lifecycle skips an optional buildpack whose detection errors, and the image
// would be exported unwrapped with the bad value unreported.
type Detect struct {
	Logger log.Logger
}

// Detect implements libcnb.DetectFunc.
func (d Detect) Detect(context libcnb.DetectContext) (libcnb.DetectResult, error) {
	cr, err := configurationResolver(context.Buildpack)
	if err != nil {
		return libcnb.DetectResult{}, err
	}
	if _, err := config.Resolve(cr); err != nil {
		d.Logger.Headerf("%s: the build will fail", err)
	}
	return libcnb.DetectResult{Pass: true}, nil
}

func configurationResolver(bp libcnb.Buildpack) (libpak.ConfigurationResolver, error) {
	md, err := libpak.NewBuildModuleMetadata(bp.Metadata)
	if err != nil {
		return libpak.ConfigurationResolver{}, fmt.Errorf("unable to read buildpack metadata\n%w", err)
	}
	return libpak.NewConfigurationResolver(md)
}
