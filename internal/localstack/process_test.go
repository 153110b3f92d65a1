package localstack

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFreePortIsNeverEphemeralNorHandedTwice(t *testing.T) {
	lo, hi := portPool()
	seen := map[int]bool{}
	for range 200 {
		port, err := FreePort()
		require.NoError(t, err)
		assert.False(t, seen[port], "port %d handed out twice", port)
		seen[port] = true
		assert.True(t, port >= lo && port < hi, "port %d outside the pool [%d, %d)", port, lo, hi)
	}
	// An ephemeral port the kernel gives a probe is never in the pool.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	ephemeral := l.Addr().(*net.TCPAddr).Port
	assert.False(t, ephemeral >= lo && ephemeral < hi, "the kernel's port %d lies in the pool [%d, %d)", ephemeral, lo, hi)

	// A port something listens on, or that was handed out, is not handed out.
	port, err := FreePort()
	require.NoError(t, err)
	portsMu.Lock()
	delete(portsHanded, port)
	portsMu.Unlock()
	busy, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	require.NoError(t, err)
	_, err = takePort(port, port+1)
	assert.Error(t, err, "port %d is busy", port)
	require.NoError(t, busy.Close())
	free, err := takePort(port, port+1)
	require.NoError(t, err)
	assert.Equal(t, port, free)
	_, err = takePort(port, port+1)
	assert.Error(t, err, "port %d was handed out", port)
}
