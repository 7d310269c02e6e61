package audit

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Builder audits a builder image for each Platform API its lifecycle supports, or for the one
// given (platformAPI, "" for all): every image it makes starts through the init when, in every
// order group as the lifecycle merges it at that Platform API, the init buildpack comes last.
// The lifecycle appends [system.post] to each group from Platform API 0.15 only, skipping a
// system buildpack whose id the group already lists. The builder's files (/cnb/order.toml,
// /cnb/system.toml, /cnb/lifecycle/lifecycle.toml and /cnb/build-config/env) are read from its
// layers, whiteouts and symbolic links applied, and win over its labels. The build-config
// environment must leave BP_INIT_ENABLED true and BP_INIT_PROCESS_TYPES selecting every type by
// default, and says whether app developers can opt out. An error means bad input: the image is
// not a builder, its labels or files cannot be read, or its lifecycle lacks platformAPI.
func Builder(ref string, img v1.Image, platformAPI string) (Report, error) {
	r := Report{Kind: "builder", Ref: ref}
	in, err := readBuilder(img)
	if err != nil {
		return r, err
	}
	platforms := in.platforms
	if platformAPI != "" {
		v, err := parseAPI(platformAPI)
		if err != nil {
			return r, fmt.Errorf("--platform-api: %w", err)
		}
		if !containsAPI(in.platforms, v) {
			return r, fmt.Errorf("lifecycle %s does not support Platform API %s: it supports %s", in.lifecycle, v, apiList(in.platforms))
		}
		platforms = []apiVersion{v}
	}
	r.Lifecycle, r.PlatformAPI = in.lifecycle, platforms[len(platforms)-1].String()
	r.Warnings = in.warnings

	note, envProblems, envWarnings := auditBuildEnv(in.env)
	r.Warnings = append(r.Warnings, envWarnings...)
	r.Problems = append(r.Problems, in.problems...)
	r.Problems = append(r.Problems, auditSystem(in, platforms)...)
	var groupProblems []platformProblem
	for _, v := range platforms {
		p := judgePlatform(in, v)
		if len(envProblems) > 0 {
			p.Covered = false
		}
		r.Platforms = append(r.Platforms, p)
		for _, g := range p.Groups {
			if !g.Covered {
				groupProblems = append(groupProblems, platformProblem{v, fmt.Sprintf("order group %d (%s): %s", g.Index, strings.Join(g.Buildpacks, ", "), g.Reason)})
			}
		}
		if len(p.Groups) == 0 {
			groupProblems = append(groupProblems, platformProblem{v, "the builder has no order group"})
		}
	}
	r.Groups = r.Platforms[len(r.Platforms)-1].Groups
	r.Problems = append(r.Problems, byPlatforms(groupProblems, platforms)...)
	r.Problems = append(r.Problems, envProblems...)
	r.Covered = len(r.Problems) == 0
	if r.Covered {
		r.OptOut = note
		r.Summary = fmt.Sprintf("on Platform API %s of lifecycle %s: %s; %s", apiRange(platforms), in.lifecycle, coveredBy(in, platforms), note)
	}
	return r, nil
}

// judgePlatform judges each order group as the lifecycle merges it at Platform API v.
func judgePlatform(in builderInputs, v apiVersion) PlatformReport {
	p := PlatformReport{PlatformAPI: v.String(), Covered: true, Groups: []GroupReport{}}
	systemRead := !v.less(SystemBuildpacksPlatformAPI)
	for n, g := range in.order {
		group := g.Group
		var post []buildpackRef
		if systemRead {
			group = append(append(withoutIDsOf(in.system.Pre.Buildpacks, g.Group), g.Group...), withoutIDsOf(in.system.Post.Buildpacks, g.Group)...)
			post = withoutIDsOf(in.system.Post.Buildpacks, g.Group)
		}
		gr := GroupReport{Index: n + 1, Buildpacks: []string{}}
		for _, bp := range g.Group {
			gr.Buildpacks = append(gr.Buildpacks, bp.ID)
		}
		i := indexOf(group, InitBuildpackID)
		switch {
		case i < 0:
			gr.Reason = fmt.Sprintf("%s is not in it", InitBuildpackID)
		case i < len(group)-1:
			gr.Reason = fmt.Sprintf("%s comes after %s: its process types are not wrapped", refs(group[i+1:]), InitBuildpackID)
			if systemRead && indexOf(in.system.Post.Buildpacks, InitBuildpackID) >= 0 && indexOf(g.Group, InitBuildpackID) >= 0 {
				gr.Reason += " (the lifecycle skips [system.post]'s copy of a buildpack the group lists)"
			}
		case indexOf(post, InitBuildpackID) >= 0:
			gr.Covered, gr.Reason = true, fmt.Sprintf("[system.post] appends %s", InitBuildpackID)
		default:
			gr.Covered, gr.Reason = true, fmt.Sprintf("%s is last", InitBuildpackID)
		}
		p.Covered = p.Covered && gr.Covered
		p.Groups = append(p.Groups, gr)
	}
	if len(p.Groups) == 0 {
		p.Covered = false
	}
	return p
}

// auditSystem returns the problems of [system] that hold whatever the groups are: the init in
// [system.pre], another buildpack after it in [system.post], and, when the order alone does not
// cover every group, [system.post] at a Platform API that ignores it.
func auditSystem(in builderInputs, platforms []apiVersion) []string {
	post := in.system.Post.Buildpacks
	i := indexOf(post, InitBuildpackID)
	var problems []string
	if indexOf(in.system.Pre.Buildpacks, InitBuildpackID) >= 0 {
		problems = append(problems, fmt.Sprintf("[system.pre] lists %s: it runs before the app's buildpacks and wraps none of their process types; list it in [system.post]", InitBuildpackID))
	}
	if i < 0 {
		return problems
	}
	if i < len(post)-1 {
		problems = append(problems, fmt.Sprintf("[system.post] lists %s after %s: their process types are not wrapped; list %s last",
			refs(post[i+1:]), post[i], InitBuildpackID))
	}
	if orderCovers(in.order) || !platforms[0].less(SystemBuildpacksPlatformAPI) {
		return problems
	}
	if newest := in.platforms[len(in.platforms)-1]; newest.less(SystemBuildpacksPlatformAPI) {
		return append(problems, fmt.Sprintf("[system.post] lists %s, but lifecycle %s supports Platform API %s at most: "+
			"system buildpacks need Platform API %s (lifecycle 0.21 or newer), and this lifecycle ignores them without a word",
			post[i], in.lifecycle, newest, SystemBuildpacksPlatformAPI))
	}
	return append(problems, fmt.Sprintf("[system.post] is ignored below Platform API %s: kpack, Tekton, pack < 0.40; list %s last in every order group too",
		SystemBuildpacksPlatformAPI, InitBuildpackID))
}

// coveredBy says how a covered builder covers every group.
func coveredBy(in builderInputs, platforms []apiVersion) string {
	if !orderCovers(in.order) {
		return fmt.Sprintf("[system.post] appends %s to every order group", in.system.Post.Buildpacks[indexOf(in.system.Post.Buildpacks, InitBuildpackID)])
	}
	s := fmt.Sprintf("%s is the last buildpack of every order group (%d)", InitBuildpackID, len(in.order))
	if indexOf(in.system.Post.Buildpacks, InitBuildpackID) >= 0 && !platforms[len(platforms)-1].less(SystemBuildpacksPlatformAPI) {
		s += ", and [system.post], which the lifecycle skips in a group that lists it"
	}
	return s
}

// orderCovers reports whether the init is the last member of every order group.
func orderCovers(o order) bool {
	for _, g := range o {
		if i := indexOf(g.Group, InitBuildpackID); i < 0 || i < len(g.Group)-1 {
			return false
		}
	}
	return len(o) > 0
}

// platformProblem is a problem at one Platform API.
type platformProblem struct {
	API     apiVersion
	Problem string
}

// byPlatforms returns each problem once, led by the Platform APIs where it holds when it does not
// hold on all of them: "Platform API 0.7 to 0.14: ...".
func byPlatforms(problems []platformProblem, platforms []apiVersion) []string {
	var order []string
	where := map[string][]apiVersion{}
	for _, p := range problems {
		if _, ok := where[p.Problem]; !ok {
			order = append(order, p.Problem)
		}
		where[p.Problem] = append(where[p.Problem], p.API)
	}
	var lines []string
	for _, problem := range order {
		if len(where[problem]) == len(platforms) && len(platforms) > 1 {
			lines = append(lines, problem)
			continue
		}
		lines = append(lines, fmt.Sprintf("Platform API %s: %s", apiRange(where[problem]), problem))
	}
	return lines
}

func withoutIDsOf(bps, group []buildpackRef) []buildpackRef {
	var kept []buildpackRef
	for _, bp := range bps {
		if indexOf(group, bp.ID) < 0 {
			kept = append(kept, bp)
		}
	}
	return kept
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
