package etcdbackup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kcp-setups/apiserver/pkg/embeddedetcd/etcdtest"
)

// etcdWithKeys runs an embedded etcd member holding keys keys of about 1 KiB each, and
// answers a client of it and its URL.
func etcdWithKeys(t *testing.T, keys int) (*clientv3.Client, string) {
	t.Helper()
	srv, _, c := etcdtest.Member(t)
	value := strings.Repeat("v", 1000)
	for i := range keys {
		_, err := c.Put(t.Context(), fmt.Sprintf("/registry/key-%05d", i), value)
		require.NoError(t, err)
	}
	return c, srv.ClientURL
}

// TestSaveToADirectoryAndVerify is the story on a real member: thousands of keys, saved to a directory,
// verified there, and a corrupted copy refused.
func TestSaveToADirectoryAndVerify(t *testing.T) {
	c, url := etcdWithKeys(t, 3000)
	rev, err := c.Get(t.Context(), "/registry/key-00000")
	require.NoError(t, err)

	dir := filepath.Join(t.TempDir(), "snapshots")
	store, err := NewDirStore(dir)
	require.NoError(t, err)
	before := time.Now().UTC().Truncate(time.Second)
	snap, err := Save(t.Context(), c.Maintenance, url, store, "root")
	require.NoError(t, err)

	assert.True(t, strings.HasPrefix(snap.Name, "root-"), snap.Name)
	assert.False(t, snap.Time.Before(before))
	assert.Equal(t, rev.Header.Revision, snap.Revision, "nothing was written between")
	assert.Greater(t, snap.Size, int64(3000*1000), "every value is in it")
	assert.Len(t, snap.SHA256, 64)
	info, err := os.Stat(filepath.Join(dir, snap.Name))
	require.NoError(t, err)
	assert.Equal(t, snap.Size, info.Size())
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	path := filepath.Join(dir, snap.Name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	assert.Equal(t, hex.EncodeToString(sum[:]), snap.SHA256, "the sha256 of the whole object")
	require.NoError(t, Verify(t.Context(), store, snap.Name))

	// A second snapshot in the same second is told apart.
	again, err := Save(t.Context(), c.Maintenance, url, store, "root")
	require.NoError(t, err)
	assert.NotEqual(t, snap.Name, again.Name)

	// One byte of the stored database flipped: etcd's hash check refuses it.
	data[len(data)/2] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o600))
	err = Verify(t.Context(), store, snap.Name)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, snap.Name)
	require.NoError(t, Verify(t.Context(), store, again.Name), "the other is intact")
}

// corruptingStore flips a byte of every object it is given, as a faulty disk or server would.
type corruptingStore struct{ DirStore }

func (c corruptingStore) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	return c.DirStore.Put(ctx, name, &flipReader{r: r, at: 100_000})
}

type flipReader struct {
	r   io.Reader
	at  int64
	off int64
}

func (f *flipReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.at >= f.off && f.at < f.off+int64(n) {
		p[f.at-f.off] ^= 0x01
	}
	f.off += int64(n)
	return n, err
}

func TestSaveDeletesWhatFailsItsCheck(t *testing.T) {
	c, url := etcdWithKeys(t, 200)
	dir, err := NewDirStore(t.TempDir())
	require.NoError(t, err)
	_, err = Save(t.Context(), c.Maintenance, url, corruptingStore{dir}, "root")
	require.ErrorIs(t, err, ErrCorrupt)
	objs, err := dir.List(t.Context())
	require.NoError(t, err)
	assert.Empty(t, objs, "no corrupt snapshot is left to count as one of the newest")
}
