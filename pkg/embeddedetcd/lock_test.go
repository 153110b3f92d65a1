package embeddedetcd

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLockDir holds a directory and tries to take it again. The lock belongs to an open
// file, so a second open in this same process stands for a second server.
func TestLockDir(t *testing.T) {
	for _, tc := range []struct {
		name string
		// prepare runs on the fresh directory; what it returns is released after the case.
		prepare func(t *testing.T, dir string) *dirLock
		wantErr bool
	}{{
		name:    "a fresh directory",
		prepare: func(*testing.T, string) *dirLock { return nil },
	}, {
		name: "a lock file left behind by a crashed server",
		prepare: func(t *testing.T, dir string) *dirLock {
			require.NoError(t, os.WriteFile(filepath.Join(dir, lockFileName), nil, 0o600))
			return nil
		},
	}, {
		name: "a directory released by its server",
		prepare: func(t *testing.T, dir string) *dirLock {
			l, err := lockDir(dir)
			require.NoError(t, err)
			require.NoError(t, l.release())
			return nil
		},
	}, {
		name: "a directory another server holds",
		prepare: func(t *testing.T, dir string) *dirLock {
			l, err := lockDir(dir)
			require.NoError(t, err)
			return l
		},
		wantErr: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if held := tc.prepare(t, dir); held != nil {
				defer func() { assert.NoError(t, held.release()) }()
			}
			l, err := lockDir(dir)
			if tc.wantErr {
				require.ErrorIs(t, err, ErrDirInUse)
				assert.Contains(t, err.Error(), dir, "the message names the directory")
				return
			}
			require.NoError(t, err)
			assert.NoError(t, l.release())
		})
	}
}

// TestStartRefusesAHeldDirectory starts a member, then a second one on its directory: the
// second fails without touching the data, and starts once the first has closed.
func TestStartRefusesAHeldDirectory(t *testing.T) {
	dir := t.TempDir()
	first, err := Start(t.Context(), dir)
	require.NoError(t, err)

	// Without the lock, the second member waits forever for bbolt's: it is given a minute.
	refused := make(chan error, 1)
	go func() {
		second, err := Start(t.Context(), dir)
		if err == nil {
			second.Close()
		}
		refused <- err
	}()
	select {
	case err := <-refused:
		require.ErrorIs(t, err, ErrDirInUse)
	case <-time.After(time.Minute):
		t.Fatal("a second member on the directory neither started nor failed")
	}
	first.Close()

	again, err := Start(t.Context(), dir)
	require.NoError(t, err, "the directory is free once its server has closed")
	again.Close()
}
