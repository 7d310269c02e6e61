// A stand-in for the Paketo Procfile buildpack (paketo-buildpacks/procfile v5), whose module the
// Go module proxy refuses (403 "This module version is not available" for every version tried).
// Built on the libraries procfile v5.13.6 is built on, so that its launch.toml is written by the
// same code. `scripts/builders.sh launcher` builds it.
module github.com/pid1-buildpacks/init/integration/testdata/buildpacks/procfile

go 1.26.8

require (
	github.com/buildpacks/libcnb v1.30.4
	github.com/paketo-buildpacks/libpak v1.73.0
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/creack/pty v1.1.24 // indirect
	github.com/heroku/color v0.0.6 // indirect
	github.com/imdario/mergo v0.3.16 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/mitchellh/hashstructure/v2 v2.0.2 // indirect
	github.com/onsi/gomega v1.36.2 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.40.0 // indirect
)
