// Package kpack checks the documentation's kpack manifests against kpack's own API types
// (github.com/pivotal/kpack, the module path of buildpacks-community/kpack). It is a module of
// its own so that kpack's Kubernetes dependencies stay out of the buildpack and the
// integration tests; it needs no cluster.
package kpack
