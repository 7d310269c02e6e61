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
type Detect struct {
	Logger log.Logger
}

// Detect implements libcnb.DetectFunc.
func (d Detect) Detect(context libcnb.DetectContext) (libcnb.DetectResult, error) {
	cfg, err := resolveConfig(context.Buildpack)
	if err != nil {
		return libcnb.DetectResult{}, err
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

func resolveConfig(bp libcnb.Buildpack) (config.Config, error) {
	cr, err := configurationResolver(bp)
	if err != nil {
		return config.Config{}, err
	}
	return config.Resolve(cr)
}
