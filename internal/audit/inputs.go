package audit

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// builderInputs is what the lifecycle of a builder reads to pick and run the buildpacks.
type builderInputs struct {
	lifecycle string
	// platforms are the Platform APIs the lifecycle supports, oldest first.
	platforms []apiVersion
	order     order
	system    system
	env       envFiles
	// warnings say where the labels and the files disagree.
	warnings []string
	// problems say where the init buildpack's files are not those pack put in the builder.
	problems []string
}

// readBuilder reads a builder's labels, then its files, which the lifecycle reads and which win.
func readBuilder(img v1.Image) (builderInputs, error) {
	var in builderInputs
	cfg, err := imageConfig(img)
	if err != nil {
		return in, err
	}
	labels := cfg.Config.Labels
	var md builderMetadata
	if ok, err := decodeLabel(labels, BuilderMetadataLabel, &md); err != nil {
		return in, err
	} else if !ok {
		return in, fmt.Errorf("not a builder: it has no label %s", BuilderMetadataLabel)
	}
	var labelOrder order
	if ok, err := decodeLabel(labels, OrderLabel, &labelOrder); err != nil {
		return in, err
	} else if !ok {
		return in, fmt.Errorf("not a builder: it has no label %s", OrderLabel)
	}
	// pack writes no system label for a builder without [system]; older packs know none.
	var labelSystem system
	if _, err := decodeLabel(labels, SystemLabel, &labelSystem); err != nil {
		return in, err
	}
	in.lifecycle, in.order, in.system = md.Lifecycle.Version, labelOrder, labelSystem
	supported := md.Lifecycle.APIs.Platform.Supported
	if len(supported) == 0 && md.Lifecycle.API.Platform != "" {
		supported = []string{md.Lifecycle.API.Platform}
	}

	fs, err := readBuilderFS(img, lifecycleFiles)
	if err != nil {
		return in, err
	}
	var descriptor struct {
		APIs struct {
			Platform struct {
				Supported []string `toml:"supported"`
			} `toml:"platform"`
		} `toml:"apis"`
	}
	if ok, err := decodeFile(fs, lifecycleFile, &descriptor); err != nil {
		return in, err
	} else if ok && len(descriptor.APIs.Platform.Supported) > 0 {
		supported = descriptor.APIs.Platform.Supported
	}
	if in.platforms, err = parseAPIs(supported); err != nil {
		return in, err
	}

	var orderTOML struct {
		Order order `toml:"order"`
	}
	if ok, err := decodeFile(fs, orderFile, &orderTOML); err != nil {
		return in, err
	} else if ok {
		if !reflect.DeepEqual(ids(orderTOML.Order), ids(labelOrder)) {
			in.warnings = append(in.warnings, fmt.Sprintf("label %s differs from /%s, which the lifecycle reads and this audit judges", OrderLabel, orderFile))
		}
		in.order = orderTOML.Order
	}
	var systemTOML struct {
		System system `toml:"system"`
	}
	if ok, err := decodeFile(fs, systemFile, &systemTOML); err != nil {
		return in, err
	} else if ok {
		if !reflect.DeepEqual(systemTOML.System, labelSystem) {
			in.warnings = append(in.warnings, fmt.Sprintf("label %s differs from /%s, which the lifecycle reads and this audit judges", SystemLabel, systemFile))
		}
		in.system = systemTOML.System
	}
	if in.problems, err = auditInitBuildpack(fs, cfg, in); err != nil {
		return in, err
	}
	in.env, err = readBuildEnv(fs)
	return in, err
}

// decodeFile decodes the TOML file at p of the builder into v; ok is false when there is none.
func decodeFile(fs builderFS, p string, v any) (ok bool, err error) {
	contents, ok, err := fs.file(p)
	if err != nil || !ok {
		return false, err
	}
	if _, err := toml.Decode(string(contents), v); err != nil {
		return true, fmt.Errorf("unable to read /%s: %w", p, err)
	}
	return true, nil
}

func ids(o order) [][]string {
	var groups [][]string
	for _, g := range o {
		var group []string
		for _, bp := range g.Group {
			group = append(group, bp.ID)
		}
		groups = append(groups, group)
	}
	return groups
}

// parseAPIs parses the lifecycle's Platform APIs, oldest first.
func parseAPIs(supported []string) ([]apiVersion, error) {
	if len(supported) == 0 {
		return nil, fmt.Errorf("the builder names no Platform API for its lifecycle (label %s, /%s)", BuilderMetadataLabel, lifecycleFile)
	}
	var apis []apiVersion
	for _, s := range supported {
		v, err := parseAPI(s)
		if err != nil {
			return nil, fmt.Errorf("unable to read the lifecycle's Platform APIs: %w", err)
		}
		if !containsAPI(apis, v) {
			apis = append(apis, v)
		}
	}
	slices.SortFunc(apis, func(a, b apiVersion) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
	return apis, nil
}

func containsAPI(apis []apiVersion, v apiVersion) bool {
	return slices.Contains(apis, v)
}

// apiRange names Platform APIs: "0.9", "0.7 to 0.14" when they follow each other, else a list.
func apiRange(apis []apiVersion) string {
	if len(apis) == 1 {
		return apis[0].String()
	}
	consecutive := true
	for i := 1; i < len(apis); i++ {
		consecutive = consecutive && apis[i].Major == apis[i-1].Major && apis[i].Minor == apis[i-1].Minor+1
	}
	if consecutive {
		return apis[0].String() + " to " + apis[len(apis)-1].String()
	}
	return apiList(apis)
}

func apiList(apis []apiVersion) string {
	var s []string
	for _, v := range apis {
		s = append(s, v.String())
	}
	return strings.Join(s, ", ")
}
