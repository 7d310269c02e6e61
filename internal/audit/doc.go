// Package audit tells builder owners and platforms whether the images a builder makes, or an app
// image, start every process type through an init, from the labels pack and the lifecycle write
// on builders (io.buildpacks.builder.metadata, io.buildpacks.buildpack.order,
// io.buildpacks.buildpack.system) and on app images (io.buildpacks.build.metadata).
package audit
