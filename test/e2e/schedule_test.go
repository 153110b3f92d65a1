package e2e

import (
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kcp-setups/apiserver/test/framework"
)

// The parallel tests take their turns from one framework.Turns instead of from go test's own
// -parallel limit: the longest start first, and those that share the self-service roles never
// run beside TestHelmChart, which owns them, nor hold a turn while they wait for it. make
// test-e2e runs go test with a -parallel above the number of tests, and E2E_PARALLEL says how
// many run at once (8 unless set).

// The needs of parallel tests beyond their own namespaces (framework.Need).
const (
	alone       = framework.Alone
	sharedRoles = framework.SharedRoles
	ownRoles    = framework.OwnRoles
)

// longestFirst are the parallel tests that take longest, longest first, as the sequential run
// at a2f008d measured them (docs/TESTING.md): they start before every other parallel test.
var longestFirst = []string{
	"TestHelmChart",
	"TestNamespacedManifestRBACIsSufficientAndMinimal",
	"TestManifestRBACIsSufficientAndMinimal",
	"TestJoinedSetupFollowsARotation",
	"TestServiceAccountKeyRotation",
	"TestRotationWithoutFailures",
	"TestNeverTakesOver",
	"TestARotationNamesWhatItWaitsFor",
	"TestNamesCannotCollide",
	"TestManagedEtcd",
	"TestRotationOfTheRootCA",
	"TestRootShardDeploymentFollowsTheSpec",
	"TestHostRefusingWritesBacksOffAndHeals",
	"TestWholeSetup",
	"TestReferencesAcrossClusters",
	"TestRotationWithThePlugin",
	"TestShardDeregistrationAndKcpReady",
	"TestDeregistrationNeedsTheShardsUID",
	"TestStatusAndEtcdVolumesAreHeldToRights",
}

// turns is the suite's scheduler. It waits two seconds after the first parallel test before it
// starts any: go test releases them all at once when the last serial test ends.
var turns = framework.NewTurns(parallelism(), longestFirst, 2*time.Second)

// parallelism is E2E_PARALLEL, 8 unless set.
func parallelism() int {
	if n, err := strconv.Atoi(os.Getenv("E2E_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 8
}

// parallel runs t beside the other parallel tests once the scheduler gives it a turn: the
// first statement of every test that runs in parallel. A test that binds users to the
// self-service roles says so (sharedRoles), and only then may call withSelfServiceRoles.
func parallel(t *testing.T, n framework.Need) {
	t.Helper()
	t.Parallel()
	turns.Take(t.Name(), n)
	// The first cleanup registered runs last: the turn ends once the test's own cleanups
	// (its namespaces) are done.
	t.Cleanup(func() { turns.Give(n) })
	if n == sharedRoles {
		rolesHeld.Store(t.Name(), true)
		t.Cleanup(func() { rolesHeld.Delete(t.Name()) })
	}
}

// rolesHeld are the tests that run with the self-service roles shared.
var rolesHeld sync.Map
