package etcdbackup

import (
	"context"
	"time"
)

// Verified is what etcd's hash check found of a stored snapshot.
type Verified struct {
	// Size is the object's size in bytes; SHA256 is the hex sha256 of the whole object.
	Size   int64
	SHA256 string
}

// VerifyStored is Verify, answering the snapshot's size and sha256 as stored.
func VerifyStored(ctx context.Context, store Store, name string) (Verified, error) {
	v, err := verify(ctx, store, name)
	return Verified{Size: v.size, SHA256: v.sha256}, err
}

// NameTime is the time in a snapshot's name, and whether the name is a snapshot's.
func NameTime(name string) (time.Time, bool) {
	_, t, _, ok := parseName(name)
	return t, ok
}
