package etcdbackup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DirStore keeps snapshots as files of one directory, readable by their owner alone: the
// directory is 0700 and every file 0600, so that on a volume only the etcd pods' identity
// reads them. A file is written under a temporary name (a leading dot, which List skips)
// and renamed once whole and synced, so that a crash leaves no half snapshot under a name.
type DirStore struct {
	Dir string
}

var _ Store = DirStore{}

// NewDirStore makes the directory dir if it does not exist, with mode 0700.
func NewDirStore(dir string) (DirStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return DirStore{}, fmt.Errorf("creating the snapshot directory: %w", err)
	}
	// MkdirAll leaves an existing directory's mode alone; the store's is its owner's alone.
	if err := os.Chmod(dir, 0o700); err != nil {
		return DirStore{}, fmt.Errorf("restricting the snapshot directory: %w", err)
	}
	return DirStore{Dir: dir}, nil
}

func (d DirStore) path(name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	return filepath.Join(d.Dir, name), nil
}

func (d DirStore) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	final, err := d.path(name)
	if err != nil {
		return 0, err
	}
	f, err := os.CreateTemp(d.Dir, "."+name+".*")
	if err != nil {
		return 0, fmt.Errorf("writing snapshot %s: %w", name, err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// CreateTemp makes the file 0600 already; Chmod says so whatever the umask.
	if err := f.Chmod(0o600); err != nil {
		return 0, fmt.Errorf("writing snapshot %s: %w", name, err)
	}
	n, err := io.Copy(f, contextReader{ctx: ctx, r: r})
	if err != nil {
		return n, fmt.Errorf("writing snapshot %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return n, fmt.Errorf("writing snapshot %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return n, fmt.Errorf("writing snapshot %s: %w", name, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return n, fmt.Errorf("writing snapshot %s: %w", name, err)
	}
	done = true
	// The rename is durable once the directory is synced.
	if dir, err := os.Open(d.Dir); err == nil {
		_ = dir.Sync()
		_ = dir.Close()
	}
	return n, nil
}

func (d DirStore) Get(_ context.Context, name string) (io.ReadCloser, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot %s: %w", name, ErrNotFound)
	}
	return f, err
}

func (d DirStore) List(context.Context) ([]Object, error) {
	entries, err := os.ReadDir(d.Dir)
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	var objs []Object
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted while listing
		}
		if err != nil {
			return nil, fmt.Errorf("listing snapshots: %w", err)
		}
		objs = append(objs, Object{Name: e.Name(), Size: info.Size(), ModTime: info.ModTime()})
	}
	return objs, nil
}

func (d DirStore) Delete(_ context.Context, name string) error {
	p, err := d.path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting snapshot %s: %w", name, err)
	}
	return nil
}

// contextReader stops a copy once its context ends.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
