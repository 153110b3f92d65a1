package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"

	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// RevisionBump is how far a restore moves etcd's revision past the snapshot's, and the
// snapshot's revision is marked compacted: kcp's and its clients' watches and caches hold
// revisions from before the loss, which must not be mistaken for the restored ones (etcd's
// own advice for a restore under Kubernetes).
const RevisionBump = 1_000_000_000

// RestoreConfig is one member's restore.
type RestoreConfig struct {
	// DataDir is the member's --data-dir.
	DataDir string
	// Name, PeerURL, InitialCluster and InitialClusterToken are the member's flags of the
	// same names.
	Name, PeerURL, InitialCluster, InitialClusterToken string
}

// Restore writes the snapshot open reads into cfg.DataDir, as etcdutl's snapshot restore
// does, and answers true; it answers false and touches nothing when the data directory
// holds data already (a member that has run: a restore never replaces data). The snapshot
// is copied next to the data directory first and must pass etcd's hash check; the data
// directory appears whole or not at all.
func Restore(ctx context.Context, open func(context.Context) (io.ReadCloser, error), cfg RestoreConfig) (bool, error) {
	if entries, err := os.ReadDir(cfg.DataDir); err == nil && len(entries) > 0 {
		return false, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	parent := filepath.Dir(cfg.DataDir)
	staging, err := etcdbackup.NewDirStore(filepath.Join(parent, ".restore"))
	if err != nil {
		return false, err
	}
	defer func() { _ = os.RemoveAll(staging.Dir) }()
	src, err := open(ctx)
	if err != nil {
		return false, err
	}
	_, err = staging.Put(ctx, "snapshot", src)
	_ = src.Close()
	if err != nil {
		return false, err
	}
	if _, err := etcdbackup.VerifyStored(ctx, staging, "snapshot"); err != nil {
		return false, err
	}
	out := filepath.Join(staging.Dir, "data")
	if err := snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath:        filepath.Join(staging.Dir, "snapshot"),
		Name:                cfg.Name,
		OutputDataDir:       out,
		PeerURLs:            []string{cfg.PeerURL},
		InitialCluster:      cfg.InitialCluster,
		InitialClusterToken: cfg.InitialClusterToken,
		RevisionBump:        RevisionBump,
		MarkCompacted:       true,
	}); err != nil {
		return false, fmt.Errorf("restoring the snapshot: %w", err)
	}
	_ = os.Remove(cfg.DataDir) // an empty directory
	if err := os.Rename(out, cfg.DataDir); err != nil {
		return false, fmt.Errorf("moving the restored data in place: %w", err)
	}
	return true, nil
}
