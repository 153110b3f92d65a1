package framework

import (
	"context"
	"errors"
	"flag"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/internal/localstack"
	"github.com/kcp-setups/apiserver/pkg/controller"
)

// syncedBuffer is a log output that klog's flushes and the test read at once.
type syncedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestReconcilesReadsTheLoopsLog runs the controllers' Loop with the flag the stack gives
// the server (--vmodule=queue=4) and counts its log as Reconciles does: the line the Loop
// writes and the pattern the framework reads are one contract.
func TestReconcilesReadsTheLoopsLog(t *testing.T) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	require.NoError(t, fs.Parse([]string{"-logtostderr=false", "-alsologtostderr=false", "-stderrthreshold=FATAL", "-vmodule=queue=4"}))
	out := &syncedBuffer{}
	klog.SetOutput(out)
	t.Cleanup(func() {
		require.NoError(t, fs.Parse([]string{"-logtostderr=true", "-vmodule="}))
	})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan string, 8)
	loop := controller.NewLoop("rootshard", func(_ context.Context, key string) error {
		defer func() { done <- key }()
		if key == "team-a/broken" {
			// Retried an hour later: the test counts exactly one failed reconcile.
			return &controller.RetryLater{Err: errors.New("refused"), After: time.Hour}
		}
		return nil
	})
	go func() { _ = loop.Run(ctx, 1) }()
	for _, key := range []string{"team-a/root", "team-b/root", "team-a/broken"} {
		loop.Queue.Add(key)
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("%s was never synced", key)
		}
	}
	// The line comes after the sync returns: wait until the three are written.
	require.Eventually(t, func() bool {
		klog.Flush()
		return strings.Count(out.String(), `"Finished syncing"`) >= 3
	}, time.Minute, 10*time.Millisecond, "the Loop's log:\n%s", out.String())
	cancel()

	assert.Equal(t, map[string]int{"rootshard/root/success": 1, "rootshard/broken/error": 1, "success": 1, "error": 1},
		countReconciles(out.String(), "team-a"), "the Loop's log:\n%s", out.String())
	assert.Equal(t, map[string]int{"rootshard/root/success": 1, "success": 1}, countReconciles(out.String(), "team-b"))
	assert.Empty(t, countReconciles(out.String(), "team"), "a namespace is matched whole")
}

// TestReconcilesNeedsTheLog refuses to count on a stack whose server does not log them,
// rather than reporting none.
func TestReconcilesNeedsTheLog(t *testing.T) {
	_, err := (&Stack{Stack: &localstack.Stack{}}).Reconciles("team-a")
	assert.ErrorContains(t, err, "Options.LogReconciles")
}
