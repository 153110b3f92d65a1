package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatCPU(t *testing.T) {
	// A command with spaces and a parenthesis, utime 250 and stime 70 ticks.
	stat := "4242 (kube (api) server) S 1 4242 4242 0 -1 4194560 9000 0 12 0 250 70 0 0 20 0 14 0 100 2000000 5000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
	got, err := parseStatCPU(stat)
	require.NoError(t, err)
	assert.Equal(t, 3200*time.Millisecond, got)

	_, err = parseStatCPU("4242 no parenthesis")
	assert.Error(t, err)
	_, err = parseStatCPU("4242 (short) S 1 2")
	assert.Error(t, err)
}

func TestCPUPerCall(t *testing.T) {
	before := cpuSample{"server": time.Second, "etcd": time.Second, "idle": time.Second}
	after := cpuSample{"server": 3 * time.Second, "etcd": 1500 * time.Millisecond, "idle": time.Second + 10*time.Millisecond, "new": 500 * time.Millisecond}
	per := cpuPerCall(before, after, 1000)
	assert.InDelta(t, 2.0, per["server"], 1e-9)
	assert.InDelta(t, 0.5, per["etcd"], 1e-9)
	assert.InDelta(t, 0.5, per["new"], 1e-9)
	assert.NotContains(t, per, "idle", "a process under 1% of the total is left out")
	assert.InDelta(t, 3.01, per["total"], 1e-9)
	assert.Equal(t, "server 2.00, etcd 0.50, new 0.50, total 3.01", formatCPU(per))
	assert.Empty(t, cpuPerCall(before, after, 0))
}
