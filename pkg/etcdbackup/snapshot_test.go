package etcdbackup

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSnapshot is a snapshot's shape: pages of "database" followed by their sha256.
func fakeSnapshot(pages int) []byte {
	db := make([]byte, pages*4096)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range db {
		db[i] = byte(r.IntN(256))
	}
	sum := sha256.Sum256(db)
	return append(db, sum[:]...)
}

func TestVerify(t *testing.T) {
	good := fakeSnapshot(40) // larger than splitHash's buffer, so the hash spans reads
	flipped := bytes.Clone(good)
	flipped[12345] ^= 1
	badHash := bytes.Clone(good)
	badHash[len(badHash)-1] ^= 0x80
	for _, tc := range []struct {
		name    string
		data    []byte
		corrupt string
	}{
		{"whole", good, ""},
		{"a byte of the database flipped", flipped, "the database's sha256 is"},
		{"a byte of the hash flipped", badHash, "the database's sha256 is"},
		{"the last byte cut", good[:len(good)-1], "no database of 512-byte sectors"},
		{"a sector cut", append(bytes.Clone(good[:len(good)-sha256.Size-512]), good[len(good)-sha256.Size:]...), "the database's sha256 is"},
		{"the hash cut", good[:len(good)-sha256.Size], "no database of 512-byte sectors"},
		{"a byte added", append(bytes.Clone(good), 0), "no database of 512-byte sectors"},
		{"empty", nil, "no database of 512-byte sectors"},
		{"shorter than a hash", good[:10], "no database of 512-byte sectors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewDirStore(t.TempDir())
			require.NoError(t, err)
			_, err = s.Put(t.Context(), "root-20261128-101500", bytes.NewReader(tc.data))
			require.NoError(t, err)
			err = Verify(t.Context(), s, "root-20261128-101500")
			if tc.corrupt == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrCorrupt)
			assert.ErrorContains(t, err, tc.corrupt)
			assert.ErrorContains(t, err, "root-20261128-101500")
		})
	}
}

func TestVerifyOfAMissingSnapshot(t *testing.T) {
	s, err := NewDirStore(t.TempDir())
	require.NoError(t, err)
	assert.ErrorIs(t, Verify(t.Context(), s, "root-20261128-101500"), ErrNotFound)
}

func TestNewName(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 15, 0, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		existing []string
		want     string
	}{
		{nil, "root-20261128-091500"},
		{[]string{"root-20261128-091459", "other-20261128-091500-1"}, "root-20261128-091500"},
		{[]string{"root-20261128-091500"}, "root-20261128-091500-1"},
		{[]string{"root-20261128-091500", "root-20261128-091500-1"}, "root-20261128-091500-2"},
	} {
		var objs []Object
		for _, n := range tc.existing {
			objs = append(objs, Object{Name: n})
		}
		got, err := NewName("root", at, objs)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "existing %v", tc.existing)
	}
	_, err := NewName("a/b", at, nil)
	assert.Error(t, err)
}

func TestRetain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		objects []string
		keep    int
		deleted []string
	}{
		{
			name:    "the newest by the time in the name, not by the order listed",
			objects: []string{"root-20261128-120000", "root-20261127-120000", "root-20261128-060000", "root-20261126-235959"},
			keep:    2,
			deleted: []string{"root-20261126-235959", "root-20261127-120000"},
		},
		{
			name:    "two in one second: the suffixed one is the later",
			objects: []string{"root-20261128-120000", "root-20261128-120000-1", "root-20261128-120000-2"},
			keep:    1,
			deleted: []string{"root-20261128-120000", "root-20261128-120000-1"},
		},
		{
			name: "another base's snapshots and other objects are left alone",
			objects: []string{"root-20261128-120000", "root-20261128-130000", "old-20261101-000000", "old-20261102-000000",
				"root-shard-20261101-000000", "notes.txt", "root-latest"},
			keep:    1,
			deleted: []string{"root-20261128-120000"},
		},
		{
			name:    "fewer than kept",
			objects: []string{"root-20261128-120000"},
			keep:    7,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewDirStore(t.TempDir())
			require.NoError(t, err)
			for _, n := range tc.objects {
				_, err := s.Put(t.Context(), n, strings.NewReader("x"))
				require.NoError(t, err)
			}
			deleted, err := Retain(t.Context(), s, "root", tc.keep)
			require.NoError(t, err)
			assert.Equal(t, tc.deleted, deleted)
			objs, err := s.List(t.Context())
			require.NoError(t, err)
			var left []string
			for _, o := range objs {
				left = append(left, o.Name)
			}
			assert.Len(t, left, len(tc.objects)-len(tc.deleted))
			for _, d := range tc.deleted {
				assert.NotContains(t, left, d)
			}
		})
	}
	s, err := NewDirStore(t.TempDir())
	require.NoError(t, err)
	_, err = Retain(t.Context(), s, "root", 0)
	assert.Error(t, err, "keeping none is refused")
}
