package shard

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/link/remote"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// TestLinkedShardDeregistersThroughItsHome: a linked Shard being deleted asks the home of its
// link, with its name and UID, and goes once the home deleted kcp's Shard; while the link or
// the home's kcp does not answer, it stays, with Deregistered=False, retried no sooner than
// kcp's floor; a home that leaves kcp's Shard in place (409) or refuses (403) lets it go
// with a Warning Event; without a link client it goes with one too.
func TestLinkedShardDeregistersThroughItsHome(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answer   error
		goes     bool
		reason   string
		event    string
		noClient bool
	}{
		{name: "deleted at home", goes: true, reason: operatorv1alpha1.ReasonDeregistered,
			event: `Normal Deregistered kcp's Shard "shard-1" is not in the home's root workspace any more`},
		{name: "left in place", answer: &remote.StatusError{Code: http.StatusConflict, Reason: "NotMarked"}, goes: true,
			reason: operatorv1alpha1.ReasonDeregistered, event: "Warning DeregistrationSkipped the home left kcp's Shard \"shard-1\" in its root workspace (NotMarked)"},
		{name: "refused", answer: &remote.StatusError{Code: http.StatusForbidden, Reason: "Forbidden"}, goes: true,
			event: "Warning DeregistrationSkipped kcp's Shard \"shard-1\" was not deleted from the home's root workspace: the home refused"},
		{name: "the home's kcp does not answer", answer: &remote.StatusError{Code: http.StatusServiceUnavailable},
			reason: operatorv1alpha1.ReasonKcpUnreachable, event: "Warning DeregistrationFailed"},
		{name: "the link is down", answer: errors.New("dial tcp: connection refused"),
			reason: operatorv1alpha1.ReasonLinkDisconnected, event: "Warning DeregistrationFailed"},
		{name: "no link client", noClient: true, goes: true, event: "Warning DeregistrationSkipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLinkedFixture(t)
			putLinked(t, f, true)
			for range 4 {
				f.sync(t)
				f.Host.CatchUp(t)
			}
			s, err := kinds.Shard.Lister(f.c.Indexes, "team-a").Get("shard-1")
			require.NoError(t, err)
			assert.Equal(t, baseURL, shard.BaseURL(s), "the base URL it reports")
			s = s.DeepCopy()
			s.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			require.NoError(t, f.Caches.Shards.Update(s))
			controllertest.Events(f.Events)

			var asked []string
			if !tc.noClient {
				f.c.LinkDeregister = func(_ context.Context, namespace, bootstrap, name, uid string) error {
					asked = append(asked, strings.Join([]string{namespace, bootstrap, name, uid}, " "))
					return tc.answer
				}
			}
			err = f.c.SyncKey(t.Context(), "team-a/shard-1")
			if tc.noClient {
				assert.Empty(t, asked)
			} else {
				assert.Equal(t, []string{"team-a " + linkBootstrap + " shard-1 " + shardUID}, asked)
			}
			got := f.Stored(t, "team-a", "shard-1")
			assert.Equal(t, !tc.goes, slices.Contains(got.Finalizers, kinds.Shard.Finalizer()), "the Shard goes: %v", tc.goes)
			if tc.goes {
				require.NoError(t, err)
			} else {
				var later *controller.RetryLater
				require.True(t, errors.As(err, &later), "%v", err)
				assert.Equal(t, controller.KcpRetryFloor, later.After)
			}
			if tc.reason != "" {
				c := condition(got, operatorv1alpha1.ConditionDeregistered)
				assert.Equal(t, tc.reason, c.Reason)
				assert.Equal(t, tc.goes, c.Status == metav1.ConditionTrue)
			}
			events := controllertest.Events(f.Events)
			assert.True(t, slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, tc.event) }), "events: %v", events)
		})
	}
}
