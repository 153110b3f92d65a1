package localstack

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

func TestProcessEnvironmentOffTheCommandLineAndKeptOnRerun(t *testing.T) {
	dir := t.TempDir()
	p, err := StartProcessWithEnv(dir, "env", "/bin/sh", []string{"LOCALSTACK_SECRET=s3cr3t"}, "-c", `echo "secret=$LOCALSTACK_SECRET"`)
	require.NoError(t, err)
	<-p.done
	assert.NotContains(t, strings.Join(p.cmd.Args, " "), "s3cr3t")
	again, err := p.Rerun()
	require.NoError(t, err)
	<-again.done
	data, err := os.ReadFile(filepath.Join(dir, "env.log"))
	require.NoError(t, err)
	assert.Equal(t, "secret=s3cr3t\nsecret=s3cr3t\n", string(data))
}
