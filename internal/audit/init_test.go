package audit_test

import (
	"testing"

	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
)

func TestUnit(t *testing.T) {
	suite := spec.New("audit", spec.Report(report.Terminal{}))
	suite("Builder", testBuilder)
	suite("Image", testImage)
	suite("Main", testMain)
	suite.Run(t)
}
