package audit

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// buildConfigEnvDir is where pack puts a builder's [[build.env]]: the lifecycle reads it into
// every buildpack's environment, a file NAME.override over the user's value, NAME.default or
// NAME when the user gives none.
const buildConfigEnvDir = "cnb/build-config/env"

// enabledSetting is what a builder's build-config environment does to BP_INIT_ENABLED.
type enabledSetting struct {
	// File is the path of the file in the builder, empty when there is none.
	File string
	// Override is true for NAME.override, false for NAME.default and NAME.
	Override bool
	Value    string
}

// builderEnabledSetting reads BP_INIT_ENABLED from the builder's build-config environment, the
// last layer that has it winning. This reads every layer of the builder.
func builderEnabledSetting(img v1.Image) (enabledSetting, error) {
	layers, err := img.Layers()
	if err != nil {
		return enabledSetting{}, fmt.Errorf("unable to read the builder's layers: %w", err)
	}
	var found enabledSetting
	for i, layer := range layers {
		if err := scanLayer(layer, &found); err != nil {
			return enabledSetting{}, fmt.Errorf("unable to read layer %d of the builder: %w", i+1, err)
		}
	}
	return found, nil
}

func scanLayer(layer v1.Layer, found *enabledSetting) error {
	rc, err := layer.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		dir, file := path.Split(name)
		if strings.TrimSuffix(dir, "/") != buildConfigEnvDir || hdr.Typeflag != tar.TypeReg {
			continue
		}
		variable, suffix, _ := strings.Cut(file, ".")
		if variable != "BP_INIT_ENABLED" || (suffix != "" && suffix != "override" && suffix != "default") {
			continue
		}
		value, err := io.ReadAll(io.LimitReader(tr, 1024))
		if err != nil {
			return err
		}
		override := suffix == "override"
		// An override stays in force whatever default a later layer adds.
		if found.Override && !override {
			continue
		}
		*found = enabledSetting{File: "/" + name, Override: override, Value: string(value)}
	}
}

// auditEnabledSetting returns what the builder's BP_INIT_ENABLED setting means: a problem when
// it turns the init off, else a note on whether app developers can opt out.
func auditEnabledSetting(s enabledSetting) (note, problem string) {
	value := strings.ToLower(strings.TrimSpace(s.Value))
	switch {
	case s.File == "":
		return "app developers can opt out with BP_INIT_ENABLED=false", ""
	case value == "true" && s.Override:
		return fmt.Sprintf("BP_INIT_ENABLED=false is ignored (%s)", s.File), ""
	case value == "true" || value == "":
		return fmt.Sprintf("app developers can opt out with BP_INIT_ENABLED=false (%s is a default)", s.File), ""
	case value == "false" && s.Override:
		return "", fmt.Sprintf("%s sets BP_INIT_ENABLED=false for every build: no image is wrapped", s.File)
	case value == "false":
		return "", fmt.Sprintf("%s sets BP_INIT_ENABLED=false unless the app developer sets it: images are not wrapped by default", s.File)
	}
	return "", fmt.Sprintf("%s sets BP_INIT_ENABLED=%q, which is not true or false: every build fails", s.File, s.Value)
}
