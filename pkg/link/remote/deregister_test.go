package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/pkg/link"
)

// TestDeregister: the consumer reaches the deregister route of its kind through the
// listener's checks; 204 is done, a 409 is a refusal whose reason the client keeps, a 503 is
// no refusal (asked again), and a kind the Link does not admit is the listener's 403.
func TestDeregister(t *testing.T) {
	var got link.DeregisterRequest
	var authorized link.Authorized
	answer := http.StatusNoContent
	h := newHome(t, link.DefaultLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authorized, _ = link.AuthorizedFrom(r.Context())
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		if answer == http.StatusConflict {
			w.WriteHeader(answer)
			_, _ = w.Write([]byte(`{"reason":"NotMarked"}`))
			return
		}
		w.WriteHeader(answer)
	}))
	c := h.client(t)
	consumer := link.ConsumerRef{Namespace: "remote", Name: "shard-1", UID: "uid-shard-1"}
	require.NoError(t, c.Deregister(context.Background(), link.Shard, consumer))
	assert.Equal(t, link.Request{Operation: link.Deregister, Kind: link.Shard}, authorized.Request)
	assert.Equal(t, consumer, got.Consumer)

	answer = http.StatusConflict
	err := c.Deregister(context.Background(), link.Shard, consumer)
	var status *StatusError
	require.True(t, errors.As(err, &status), "%v", err)
	assert.Equal(t, http.StatusConflict, status.Code)
	assert.Equal(t, "NotMarked", status.Reason)
	assert.True(t, IsRefused(err))

	answer = http.StatusServiceUnavailable
	err = c.Deregister(context.Background(), link.Shard, consumer)
	require.Error(t, err)
	assert.False(t, IsRefused(err), "a kcp that did not answer is asked again")

	err = c.Deregister(context.Background(), link.FrontProxy, consumer)
	assert.True(t, IsForbidden(err), "the Link admits no FrontProxy: %v", err)
}
