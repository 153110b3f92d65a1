package e2e

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

func TestWatchSeesCreateAndDelete(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "watch")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := stack.KubectlCommand(ctx, stack.AdminKubeconfig, "get", "rootshards", "-n", ns, "--watch", "--output-watch-events", "--no-headers")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { cancel(); _ = cmd.Wait() }()

	events := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			// A line is EVENT NAME HOSTNAME VERSION PHASE AGE; the event and the name tell the story.
			if f := strings.Fields(sc.Text()); len(f) >= 2 {
				events <- f[0] + " " + f[1]
			}
		}
		close(events)
	}()
	// The watch is established once kubectl has listed; an empty list prints nothing, so
	// create only after a moment and rely on the event stream's order.
	time.Sleep(2 * time.Second)
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, framework.RootShardManifest("watched", "kcp.example.com", 6443)))
	kubectl(t, "delete", "rootshard", "watched", "-n", ns)

	// The controller adds its finalizer and writes the status in between, as MODIFIED events.
	var seen []string
	for len(seen) == 0 || seen[len(seen)-1] != "DELETED watched" {
		select {
		case e, ok := <-events:
			require.True(t, ok, "kubectl's watch ended early; saw %v", seen)
			seen = append(seen, e)
		case <-ctx.Done():
			t.Fatalf("saw only %v", seen)
		}
	}
	assert.Equal(t, "ADDED watched", seen[0], "events: %v", seen)
	for _, e := range seen[1 : len(seen)-1] {
		assert.Equal(t, "MODIFIED watched", e, "events: %v", seen)
	}

}
