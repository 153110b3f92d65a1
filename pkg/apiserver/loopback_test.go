package apiserver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	restclient "k8s.io/client-go/rest"
)

// TestLoopbackUserIsWhomTheTokenAuthenticates: the controllers' identity is the user the
// loopback token authenticates as, UID included; a token that does not authenticate stops
// the server, and a server that authenticates nobody has none.
func TestLoopbackUserIsWhomTheTokenAuthenticates(t *testing.T) {
	authn := authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		if req.Header.Get("Authorization") != "Bearer loopback-token" {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: user.APIServerUser, UID: "drawn-at-start"}}, true, nil
	})
	u, err := loopbackUser(authn, &restclient.Config{BearerToken: "loopback-token"})
	require.NoError(t, err)
	assert.Equal(t, user.APIServerUser, u.GetName())
	assert.Equal(t, "drawn-at-start", u.GetUID())

	_, err = loopbackUser(authn, &restclient.Config{BearerToken: "another"})
	assert.Error(t, err)

	u, err = loopbackUser(nil, &restclient.Config{BearerToken: "loopback-token"})
	require.NoError(t, err)
	assert.Nil(t, u)
}
