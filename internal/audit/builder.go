package audit

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Builder audits a builder image: every image it makes starts through the init when the init
// buildpack is the last of [system.post] and the builder's lifecycle honours system buildpacks
// (Platform API 0.15 or newer), or when the init buildpack is the last member of every order
// group. Each group that is not covered is a problem, with the reason. A covered builder's
// build-config environment (every layer is read) says whether app developers can opt out with
// BP_INIT_ENABLED=false, or turns the init off, which is a problem. An error means bad input:
// the image is not a builder, or its labels cannot be read.
func Builder(ref string, img v1.Image) (Report, error) {
	r := Report{Kind: "builder", Ref: ref}
	cfg, err := imageConfig(img)
	if err != nil {
		return r, err
	}
	labels := cfg.Config.Labels

	var md builderMetadata
	if ok, err := decodeLabel(labels, BuilderMetadataLabel, &md); err != nil {
		return r, err
	} else if !ok {
		return r, fmt.Errorf("not a builder: it has no label %s", BuilderMetadataLabel)
	}
	var groups order
	if ok, err := decodeLabel(labels, OrderLabel, &groups); err != nil {
		return r, err
	} else if !ok {
		return r, fmt.Errorf("not a builder: it has no label %s", OrderLabel)
	}
	// pack writes no system label for a builder without [system]; older packs know none.
	var sys system
	if _, err := decodeLabel(labels, SystemLabel, &sys); err != nil {
		return r, err
	}
	platform, err := md.highestPlatformAPI()
	if err != nil {
		return r, err
	}
	r.Lifecycle, r.PlatformAPI = md.Lifecycle.Version, platform.String()

	system, systemProblem := auditSystem(sys, md.Lifecycle.Version, platform)
	r.Groups = auditGroups(groups, system)
	switch {
	case system != "":
		r.Covered = true
		r.Summary = fmt.Sprintf("%s; lifecycle %s, Platform API %s", system, r.Lifecycle, r.PlatformAPI)
	case len(r.Groups) == 0:
		r.Problems = append(r.Problems, "the builder has no order group")
	default:
		r.Covered = true
		for _, g := range r.Groups {
			if !g.Covered {
				r.Covered = false
				r.Problems = append(r.Problems, fmt.Sprintf("order group %d (%s): %s", g.Index, strings.Join(g.Buildpacks, ", "), g.Reason))
			}
		}
		if r.Covered {
			r.Summary = fmt.Sprintf("%s is the last buildpack of every order group (%d); lifecycle %s, Platform API %s",
				InitBuildpackID, len(r.Groups), r.Lifecycle, r.PlatformAPI)
		}
	}
	if r.Covered {
		setting, err := builderEnabledSetting(img)
		if err != nil {
			return r, err
		}
		note, problem := auditEnabledSetting(setting)
		if problem != "" {
			r.Covered, r.Summary = false, ""
			r.Problems = append(r.Problems, problem)
		} else {
			r.OptOut = note
			r.Summary += "; " + note
		}
	}
	if systemProblem != "" {
		if r.Covered {
			r.Warnings = append(r.Warnings, systemProblem)
		} else {
			r.Problems = append([]string{systemProblem}, r.Problems...)
		}
	}
	return r, nil
}

// auditSystem returns how [system.post] covers every group, or, when it does not although it
// names the init buildpack (or [system.pre] does), why.
func auditSystem(sys system, lifecycle string, platform apiVersion) (covered, problem string) {
	post := sys.Post.Buildpacks
	i := indexOf(post, InitBuildpackID)
	switch {
	case i < 0 && indexOf(sys.Pre.Buildpacks, InitBuildpackID) >= 0:
		return "", fmt.Sprintf("[system.pre] lists %s: it runs before the app's buildpacks and wraps none of their process types; list it in [system.post]", InitBuildpackID)
	case i < 0:
		return "", ""
	case platform.less(SystemBuildpacksPlatformAPI):
		return "", fmt.Sprintf("[system.post] lists %s, but lifecycle %s supports Platform API %s at most: "+
			"system buildpacks need Platform API %s (lifecycle 0.21 or newer), and this lifecycle ignores them without a word",
			post[i], lifecycle, platform, SystemBuildpacksPlatformAPI)
	case i < len(post)-1:
		return "", fmt.Sprintf("[system.post] lists %s after %s: their process types are not wrapped; list %s last",
			refs(post[i+1:]), post[i], InitBuildpackID)
	}
	return fmt.Sprintf("[system.post] appends %s to every order group", post[i]), ""
}

// auditGroups reports each order group: covered by [system.post] when system says how, else
// when the init buildpack is its last member.
func auditGroups(groups order, system string) []GroupReport {
	var reports []GroupReport
	for n, g := range groups {
		gr := GroupReport{Index: n + 1, Buildpacks: []string{}}
		for _, bp := range g.Group {
			gr.Buildpacks = append(gr.Buildpacks, bp.ID)
		}
		i := indexOf(g.Group, InitBuildpackID)
		switch {
		case system != "":
			gr.Covered, gr.Reason = true, system
		case i < 0:
			gr.Reason = fmt.Sprintf("%s is not in it", InitBuildpackID)
		case i < len(g.Group)-1:
			gr.Reason = fmt.Sprintf("%s comes after %s: its process types are not wrapped", refs(g.Group[i+1:]), InitBuildpackID)
		default:
			gr.Covered, gr.Reason = true, fmt.Sprintf("%s is last", InitBuildpackID)
		}
		reports = append(reports, gr)
	}
	return reports
}

func indexOf(bps []buildpackRef, id string) int {
	for i, bp := range bps {
		if bp.ID == id {
			return i
		}
	}
	return -1
}

func refs(bps []buildpackRef) string {
	var s []string
	for _, bp := range bps {
		s = append(s, bp.String())
	}
	return strings.Join(s, ", ")
}

func imageConfig(img v1.Image) (*v1.ConfigFile, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("unable to read the image configuration: %w", err)
	}
	return cfg, nil
}
