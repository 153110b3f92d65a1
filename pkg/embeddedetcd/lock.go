package embeddedetcd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
)

// lockFileName is the file inside the embedded etcd's directory whose lock marks the
// directory as in use by a running server.
const lockFileName = "kcp-setups.lock"

// ErrDirInUse is returned when another running server holds the directory.
var ErrDirInUse = errors.New("held by another running kcp-setups server")

// dirLock is the exclusive hold of one server on an embedded etcd directory.
type dirLock struct {
	file *fileutil.LockedFile
}

// lockDir takes the directory for this process, without waiting. Two members on one
// directory would not fail: bbolt waits forever for its own lock, so the second server would
// hang instead of saying why. The lock belongs to the open file, so the kernel drops it when
// the process dies, and a restart after a crash needs no cleanup; the file itself may stay.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := fileutil.TryLockFile(path, os.O_WRONLY|os.O_CREATE, fileutil.PrivateFileMode)
	if errors.Is(err, fileutil.ErrLocked) {
		return nil, fmt.Errorf("the embedded etcd directory %s is %w (it holds the lock on %s); stop that server or give this one another --embedded-etcd-dir", dir, ErrDirInUse, path)
	}
	if err != nil {
		return nil, fmt.Errorf("locking the embedded etcd directory %s: %w", dir, err)
	}
	return &dirLock{file: f}, nil
}

// release lets another server take the directory.
func (l *dirLock) release() error {
	return l.file.Close()
}
