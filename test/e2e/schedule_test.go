package e2e

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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

// longestFirst are the parallel tests that take longest, longest first, as the suite's own
// report (timeline, below) measured them at 9b1f555 (docs/TESTING.md): they start before every
// other parallel test.
var longestFirst = []string{
	"TestHelmChart",
	"TestManifestRBACIsSufficientAndMinimal",
	"TestNamespacedManifestRBACIsSufficientAndMinimal",
	"TestUpgradeHaltsAndResumes",
	"TestLinkedShardDeregistersThroughTheHome",
	"TestRotationAcrossClustersWithoutASyncTool",
	"TestJoinedSetupFollowsARotation",
	"TestBackupAndRestore",
	"TestRotationWithoutFailures",
	"TestUpgradeInOrder",
	"TestPreviewMatchesWhatHappens",
	"TestServiceAccountKeyRotation",
	"TestSnapshotRetentionAndVerification",
	"TestManagedEtcd",
	"TestEtcdAlarmAndDefrag",
	"TestNamesCannotCollide",
	"TestLinkCARotation",
	"TestARotationNamesWhatItWaitsFor",
	"TestRotationOfTheRootCA",
	"TestRotationWithThePlugin",
	"TestNeverTakesOver",
	"TestDocsRunAsWritten",
	"TestShardDeregistrationAndKcpReady",
	"TestDeregistrationNeedsTheShardsUID",
	"TestKubeconfigAuthorizationOnAnotherShard",
	"TestTakeOverFromKcpOperator",
	"TestTakeOverFromKcpOperatorV09",
	"TestKcpOperatorManifests",
	"TestLinkedShardAcrossClusters",
	"TestLinkedShardUsesTheHomesCacheServer",
	"TestRestoreIntoANewSetupFromAnother",
	"TestRootShardDeploymentFollowsTheSpec",
	"TestHostRefusingWritesBacksOffAndHeals",
	"TestWholeSetup",
	"TestReferencesAcrossClusters",
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
	began := time.Now()
	// The first cleanup registered runs last: the turn ends once the test's own cleanups
	// (its namespaces) are done.
	t.Cleanup(func() {
		if t.Failed() {
			sharedFailed.Store(true)
		}
		timeline.record(t.Name(), "shared", began)
		turns.Give(n)
	})
	if n == sharedRoles {
		rolesHeld.Store(t.Name(), true)
		t.Cleanup(func() { rolesHeld.Delete(t.Name()) })
	}
}

// rolesHeld are the tests that run with the self-service roles shared.
var rolesHeld sync.Map

// sharedFailed is set when a parallel test failed: TestMain then dumps the shared stack's logs.
var sharedFailed atomic.Bool

// The fault tests, which restart, stop or kill a component of the stack (kube-apiserver,
// cert-manager, the server), run on a stack of their own, one after another, beside the
// parallel tests: no test on the shared stack sees their faults, and none of theirs sees the
// other tests' objects. They take no turn from the scheduler: the turns are the shared
// stack's. One lane is enough: the parallel tests set the end of the suite, and a second
// fault stack only takes CPU from them (docs/TESTING.md).

// faults is the fault tests' lane.
var faults = faultLane{done: make(chan struct{})}

// faultLane is the fault tests' stack, started once, and the turn they take one at a time.
type faultLane struct {
	once   sync.Once
	begun  atomic.Bool
	done   chan struct{} // closed once the start has ended, with stack or err
	stack  *framework.Stack
	err    error
	turn   sync.Mutex
	failed atomic.Bool // a fault test failed
}

// start starts the fault tests' stack in the background, once.
func (l *faultLane) start() {
	l.once.Do(func() {
		l.begun.Store(true)
		go func() {
			defer close(l.done)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			l.stack, l.err = framework.Start(ctx, framework.Options{RecordForLeakScan: true, LogReconciles: true,
				Progress: func(format string, args ...any) { fmt.Printf("e2e: fault stack: "+format+"\n", args...) }})
		}()
	})
}

// started waits for the start, if one began, and is the stack it started, or nil.
func (l *faultLane) started() *framework.Stack {
	if !l.begun.Load() {
		return nil
	}
	<-l.done
	return l.stack
}

// stop stops the fault tests' stack, if one started.
func (l *faultLane) stop() {
	if s := l.started(); s != nil {
		s.Stop()
	}
}

// onFaultStack runs the fault test t on the fault tests' stack, once every fault test before
// it has ended, and beside the parallel tests: the first statement of every fault test. It
// returns the stack, which stackOf gives the helpers the test calls too.
func onFaultStack(t *testing.T) *framework.Stack {
	t.Helper()
	faults.start()
	t.Parallel()
	waiting := time.Now()
	faults.turn.Lock()
	t.Logf("on the fault tests' stack, after %s waiting for it", time.Since(waiting).Round(time.Second))
	began := time.Now()
	// The first cleanup registered runs last: the next fault test starts once this one's own
	// cleanups (its namespaces, the components it restores) are done.
	t.Cleanup(func() {
		if t.Failed() {
			faults.failed.Store(true)
		}
		timeline.record(t.Name(), "faults", began)
		faults.turn.Unlock()
	})
	<-faults.done
	require.NoError(t, faults.err, "starting the fault tests' stack")
	stacks.Store(t.Name(), faults.stack)
	return faults.stack
}

// timeline is when each test that took a turn began and how long it held it, for the report
// the suite prints at its end (docs/TESTING.md): what a shorter suite must start earlier or
// make shorter.
var timeline = turnTimeline{start: time.Now()}

// turnTimeline records the turns tests held, on the shared stack or the fault tests' lane.
type turnTimeline struct {
	start time.Time
	mu    sync.Mutex
	turns []heldTurn
}

// heldTurn is one test's turn: when it began and ended, since the suite's start.
type heldTurn struct {
	name, lane string
	began, end time.Duration
}

func (l *turnTimeline) record(name, lane string, began time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.turns = append(l.turns, heldTurn{name: name, lane: lane, began: began.Sub(l.start), end: time.Since(l.start)})
}

// report prints the last tests to end, and every test by how long it held its turn.
func (l *turnTimeline) report(w io.Writer, last int) {
	l.mu.Lock()
	turns := slices.Clone(l.turns)
	l.mu.Unlock()
	if len(turns) == 0 {
		return
	}
	line := func(h heldTurn) {
		fmt.Fprintf(w, "  %-58s %-6s began %5.0fs  held %4.0fs  ended %5.0fs\n", h.name, h.lane,
			h.began.Seconds(), (h.end - h.began).Seconds(), h.end.Seconds())
	}
	slices.SortFunc(turns, func(a, b heldTurn) int { return cmp.Compare(b.end, a.end) })
	fmt.Fprintf(w, "e2e: the %d tests that ended last (seconds since the suite started):\n", min(last, len(turns)))
	for _, h := range turns[:min(last, len(turns))] {
		line(h)
	}
	slices.SortFunc(turns, func(a, b heldTurn) int { return cmp.Compare(b.end-b.began, a.end-a.began) })
	fmt.Fprintln(w, "e2e: every test by how long it held its turn (longestFirst's order):")
	for _, h := range turns {
		line(h)
	}
}
