package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// DefaultBuildConfigDir is where the lifecycle reads the builder's build-config environment
// (builder.toml's [[build.env]]); the lifecycle does not tell buildpacks if a platform moves it.
const DefaultBuildConfigDir = "/cnb/build-config"

// EnabledLock returns the file through which the builder locks BP_INIT_ENABLED, the
// build-config env file with the override suffix that wins over the app developer's value, and
// whether it exists in buildConfigDir (DefaultBuildConfigDir when empty).
func EnabledLock(buildConfigDir string) (string, bool, error) {
	if buildConfigDir == "" {
		buildConfigDir = DefaultBuildConfigDir
	}
	path := filepath.Join(buildConfigDir, "env", Enabled+".override")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return path, false, nil
	} else if err != nil {
		return path, false, fmt.Errorf("unable to read %s\n%w", path, err)
	}
	return path, true, nil
}
