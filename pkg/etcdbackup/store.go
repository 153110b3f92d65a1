// Package etcdbackup takes, verifies and keeps snapshots of a managed etcd (docs/etcd.md):
// Save streams a member's Maintenance.Snapshot into a Store and reads it back through
// etcd's own hash check (Verify); Retain keeps the newest of them. It holds no snapshot in
// memory: every copy streams, whatever the size of the database.
package etcdbackup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Store is where snapshots are kept: a directory (DirStore) or S3-compatible object storage
// (S3Store). Names are flat: no slash, no "..".
type Store interface {
	// Put writes the object name from r, replacing none that exists halfway: the object is
	// there whole or not at all. It answers the bytes written.
	Put(ctx context.Context, name string, r io.Reader) (int64, error)
	// Get opens the object name for reading; ErrNotFound when there is none.
	Get(ctx context.Context, name string) (io.ReadCloser, error)
	// List answers every object of the store.
	List(ctx context.Context) ([]Object, error)
	// Delete removes the object name; removing one that is gone is no error.
	Delete(ctx context.Context, name string) error
}

// Object is an object of a Store.
type Object struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// ErrNotFound is answered by Get for an object that does not exist.
var ErrNotFound = errors.New("no such snapshot")

// ValidName refuses a name that could leave the store's directory or prefix, or that the
// stores keep for themselves (a leading dot: DirStore's files being written).
func ValidName(name string) error {
	switch {
	case name == "":
		return errors.New("a snapshot name must not be empty")
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("snapshot name %q must not contain a slash", name)
	case strings.Contains(name, ".."):
		return fmt.Errorf("snapshot name %q must not contain \"..\"", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("snapshot name %q must not start with a dot", name)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("snapshot name %q must not contain control characters", name)
	}
	return nil
}
