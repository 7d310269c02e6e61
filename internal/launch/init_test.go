package launch_test

import (
	"testing"

	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
)

func TestUnit(t *testing.T) {
	suite := spec.New("launch", spec.Report(report.Terminal{}))
	suite("ReadLaunchTOML", testReadLaunchTOML)
	suite("ReadGroup", testReadGroup)
	suite("Collect", testCollect)
	suite("Merge", testMerge)
	suite.Run(t)
}
