package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A watch open when the server is asked to stop is ended by the server, so that the
// shutdown does not wait for it: kube-apiserver holds one open for every client of the
// group. Without --shutdown-watch-termination-grace-period the watch would stay open until
// the request timeout (a minute), longer than this test waits for its end.
func TestShutdownEndsOpenWatches(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	w, err := s.client.OperatorV1alpha1().RootShards("default").Watch(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()

	stopped := make(chan struct{})
	go func() {
		s.stop()
		close(stopped)
	}()
	ended := false
	deadline := time.After(45 * time.Second)
	for !ended {
		select {
		case _, open := <-w.ResultChan():
			ended = !open
		case <-deadline:
			require.FailNow(t, "the server left the watch open while stopping")
		}
	}
	select {
	case <-stopped:
	case <-time.After(45 * time.Second):
		assert.Fail(t, "the server did not stop once its watches ended")
	}
}
