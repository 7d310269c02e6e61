package rewrite_test

import (
	"testing"

	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
)

func TestUnit(t *testing.T) {
	suite := spec.New("rewrite", spec.Report(report.Terminal{}))
	suite("Wrap", testWrap)
	suite("ExistingInit", testExistingInit)
	suite("ShellScript", testShellScript)
	suite("Profiles", testProfiles)
	suite("Hostile", testHostile)
	suite.Run(t)
}
