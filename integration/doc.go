// Package integration holds the end-to-end tests of the PID 1 init buildpack: real pack,
// real lifecycle, real Docker. Its go.mod also declares, as tools, the pack and lifecycle
// versions that scripts/setup.sh builds.
package integration
