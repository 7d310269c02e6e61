// Package buildpack holds the buildpack's detect and build functions.
package buildpack

import (
	"fmt"

	"github.com/buildpacks/libcnb/v2"
	"github.com/paketo-buildpacks/libpak/v2"
	"github.com/paketo-buildpacks/libpak/v2/log"

	"github.com/pid1-buildpacks/init/internal/config"
)

// Detect passes for every application unless BP_INIT_ENABLED is false, so that the buildpack can
// be listed last in every group. It requires and provides nothing.
//
// A configuration value that is not accepted passes detection too, so that build fails with the
// error: the lifecycle skips an optional buildpack whose detection errors, and the image would be
// exported unwrapped with the bad value unreported.
type Detect struct {
	Logger log.Logger
}

// Detect implements libcnb.DetectFunc.
func (d Detect) Detect(context libcnb.DetectContext) (libcnb.DetectResult, error) {
	cr, err := configurationResolver(context.Buildpack)
	if err != nil {
		return libcnb.DetectResult{}, err
	}
	cfg, err := config.Resolve(cr)
	if err != nil {
		d.Logger.Headerf("%s: the build will fail", err)
		return libcnb.DetectResult{Pass: true}, nil
	}
	if !cfg.Enabled {
		d.Logger.Headerf("SKIPPED: %s is false, processes will not be wrapped with an init", config.Enabled)
		return libcnb.DetectResult{Pass: false}, nil
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
