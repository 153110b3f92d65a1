package etcdbackup

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDirStoreKeepsFilesToItsOwner(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snapshots")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	s, err := NewDirStore(dir)
	require.NoError(t, err)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), info.Mode().Perm(), "an existing directory is restricted too")

	n, err := s.Put(t.Context(), "root-20261128-101500", strings.NewReader("data"))
	require.NoError(t, err)
	assert.EqualValues(t, 4, n)
	info, err = os.Stat(filepath.Join(dir, "root-20261128-101500"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())

	objs, err := s.List(t.Context())
	require.NoError(t, err)
	require.Len(t, objs, 1)
	assert.Equal(t, "root-20261128-101500", objs[0].Name)
	assert.EqualValues(t, 4, objs[0].Size)

	rc, err := s.Get(t.Context(), "root-20261128-101500")
	require.NoError(t, err)
	data, err := io.ReadAll(rc)
	require.NoError(t, rc.Close())
	require.NoError(t, err)
	assert.Equal(t, "data", string(data))

	_, err = s.Get(t.Context(), "root-20261128-101501")
	assert.ErrorIs(t, err, ErrNotFound)

	require.NoError(t, s.Delete(t.Context(), "root-20261128-101500"))
	require.NoError(t, s.Delete(t.Context(), "root-20261128-101500"), "deleting what is gone is no error")
	objs, err = s.List(t.Context())
	require.NoError(t, err)
	assert.Empty(t, objs)
}

// failingReader gives some bytes, then fails, as a snapshot stream cut off does.
type failingReader struct{ sent bool }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.sent {
		return 0, errors.New("stream cut")
	}
	f.sent = true
	return copy(p, "half a snapshot"), nil
}

func TestDirStoreLeavesNothingOfAFailedPut(t *testing.T) {
	dir := t.TempDir()
	s, err := NewDirStore(dir)
	require.NoError(t, err)
	_, err = s.Put(t.Context(), "root-20261128-101500", &failingReader{})
	require.ErrorContains(t, err, "stream cut")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "neither the name nor the temporary file")
}

func TestDirStoreListSkipsFilesBeingWritten(t *testing.T) {
	dir := t.TempDir()
	s, err := NewDirStore(dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".root-20261128-101500.123"), []byte("x"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	objs, err := s.List(t.Context())
	require.NoError(t, err)
	assert.Empty(t, objs)
}

func TestNamesCannotLeaveTheStore(t *testing.T) {
	dir := t.TempDir()
	s, err := NewDirStore(filepath.Join(dir, "store"))
	require.NoError(t, err)
	for _, name := range []string{"", "../x", "a/b", `a\b`, "..", "a..b", ".hidden", "a\nb"} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Put(t.Context(), name, strings.NewReader("x"))
			assert.Error(t, err)
			_, err = s.Get(t.Context(), name)
			assert.Error(t, err)
			assert.Error(t, s.Delete(t.Context(), name))
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing written beside the store")
}
