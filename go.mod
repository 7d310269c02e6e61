module github.com/pid1-buildpacks/init

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/buildpacks/libcnb/v2 v2.1.0
	github.com/heroku/color v0.0.6
	github.com/onsi/gomega v1.44.0
	github.com/paketo-buildpacks/libpak/v2 v2.2.0
	github.com/sclevine/spec v1.4.0
	golang.org/x/sys v0.50.0
)

require (
	dario.cat/mergo v1.0.2 // indirect
	github.com/Masterminds/semver v1.5.0 // indirect
	github.com/Masterminds/semver/v3 v3.4.0 // indirect
	github.com/creack/pty v1.1.24 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mitchellh/hashstructure/v2 v2.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/text v0.38.0 // indirect
)
