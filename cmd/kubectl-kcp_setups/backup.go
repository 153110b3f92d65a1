package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

const backupExample = `  # Take a snapshot of the managed etcd of the RootShard root now; prints its name
  kubectl kcp-setups backup rootshard/root

  # The same for a Shard, and wait until the snapshot is taken and listed in its status
  kubectl kcp-setups backup shard/alpha --wait --timeout 15m`

// backupOptions are the flags of kubectl kcp-setups backup.
type backupOptions struct {
	wait     bool
	timeout  time.Duration
	interval time.Duration
}

func newBackupCommand(flags *clientFlags, stdout io.Writer) *cobra.Command {
	o := backupOptions{interval: 2 * time.Second}
	cmd := &cobra.Command{
		Use:   "backup (rootshard|shard)/NAME [--wait [--timeout DURATION]]",
		Short: "Take a snapshot of a RootShard's or Shard's managed etcd now",
		Long: `Ask for a snapshot of the managed etcd of a RootShard or Shard through the backup
subresource (docs/etcd.md, "Backups and restore"), and print its name. The server takes it
into the store of spec.etcd.managed.backup and then lists it in status.etcd.snapshots; until
then it is status.etcd.pendingSnapshot, and another request is refused. --wait waits until
status.etcd.snapshots lists it, and fails with the message of a SnapshotFailed Event of the
take (the server tries again a minute later while the snapshot stays pending). Needs create on rootshards/backup or shards/backup
(the ClusterRole kcp-setups-backup).`,
		Example:           backupExample,
		ValidArgsFunction: completeObjects(flags, rootShardKind, shardKind),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := parseObject(cmd, args, rootShardKind, shardKind)
			if err != nil {
				return err
			}
			ops, ns, err := clients(flags)
			if err != nil {
				return err
			}
			out, err := askForSnapshot(cmd.Context(), ops, ns, target)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, out.Status.Snapshot)
			if !o.wait {
				return nil
			}
			kube, err := kubeClient(flags)
			if err != nil {
				return err
			}
			requested := time.Now()
			if out.Status.RequestTime != nil {
				requested = out.Status.RequestTime.Time
			}
			return waitForSnapshot(cmd.Context(), ops, kube, ns, target, out.Status.Snapshot, requested, o.interval, o.timeout)
		},
	}
	cmd.Flags().BoolVar(&o.wait, "wait", false, "Wait until status.etcd.snapshots lists the snapshot.")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "How long --wait waits.")
	cmd.Flags().DurationVar(&o.interval, "poll-interval", o.interval, "How often --wait reads the status.")
	_ = cmd.Flags().MarkHidden("poll-interval")
	return cmd
}

// askForSnapshot posts an EtcdSnapshotRequest to the backup subresource of o.
func askForSnapshot(ctx context.Context, ops clientset.Interface, ns string, o object) (*operatorv1alpha1.EtcdSnapshotRequest, error) {
	c := ops.OperatorV1alpha1()
	req := &operatorv1alpha1.EtcdSnapshotRequest{}
	if o.kind.resource == shardKind.resource {
		return c.Shards(ns).Backup(ctx, o.name, req, metav1.CreateOptions{})
	}
	return c.RootShards(ns).Backup(ctx, o.name, req, metav1.CreateOptions{})
}

// waitForSnapshot reads o's status.etcd every interval until snapshotTaken says it is done,
// and o's SnapshotFailed Events until one says that the take of the snapshot, asked for at
// requested, failed.
func waitForSnapshot(ctx context.Context, ops clientset.Interface, kube kubernetes.Interface, ns string, o object, name string,
	requested time.Time, interval, timeout time.Duration,
) error {
	var last error
	readEvents := true
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		status, err := etcdStatus(ctx, ops, ns, o)
		if err != nil {
			return false, err
		}
		done, err := snapshotTaken(status, name)
		if done || err != nil {
			last = err
			return true, nil
		}
		if !readEvents {
			return false, nil
		}
		events, err := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.kind": o.kind.name(), "involvedObject.name": o.name, "reason": operatorv1alpha1.EventSnapshotFailed,
		}.String()})
		if apierrors.IsForbidden(err) {
			// Who may ask for a snapshot need not read Events: the status alone, then.
			readEvents = false
			return false, nil
		} else if err != nil {
			return false, err
		}
		if failed := snapshotFailure(events.Items, name, requested); failed != "" {
			last = fmt.Errorf("%s (it stays pending, and the server tries again a minute after a failure)", failed)
			return true, nil
		}
		return false, nil
	})
	if last != nil {
		return fmt.Errorf("%s: %w", o, last)
	}
	if err != nil {
		return fmt.Errorf("%s: the snapshot %s is not listed in status.etcd.snapshots after %s: %w", o, name, timeout, err)
	}
	return nil
}

// etcdStatus reads o's status.etcd.
func etcdStatus(ctx context.Context, ops clientset.Interface, ns string, o object) (*operatorv1alpha1.ManagedEtcdStatus, error) {
	c := ops.OperatorV1alpha1()
	if o.kind.resource == shardKind.resource {
		s, err := c.Shards(ns).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return s.Status.Etcd, nil
	}
	rs, err := c.RootShards(ns).Get(ctx, o.name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return rs.Status.Etcd, nil
}

// snapshotTaken says whether status lists the snapshot name: true once it does; false while
// it is still pending (or the status was not written yet); an error once the server gave it
// up, neither pending nor listed (its Events say why).
func snapshotTaken(status *operatorv1alpha1.ManagedEtcdStatus, name string) (bool, error) {
	if status == nil {
		return false, nil
	}
	for _, s := range status.Snapshots {
		if s.Name == name {
			return true, nil
		}
	}
	if p := status.PendingSnapshot; p != nil && p.Name == name {
		return false, nil
	}
	return false, fmt.Errorf("the snapshot %s was not taken: it is neither pending nor listed in status.etcd.snapshots (see its SnapshotFailed Events)", name)
}

// snapshotFailure is the message of the newest SnapshotFailed Event of events that says the
// take of the snapshot name failed (operatorv1alpha1.SnapshotFailedMessage) and was last seen
// no earlier than requested (to the second, as Events keep time); "" when there is none.
func snapshotFailure(events []corev1.Event, name string, requested time.Time) string {
	prefix := fmt.Sprintf(operatorv1alpha1.SnapshotFailedMessage, name, "")
	var newest *corev1.Event
	for i := range events {
		e := &events[i]
		if e.Reason != operatorv1alpha1.EventSnapshotFailed || !strings.HasPrefix(e.Message, prefix) ||
			eventTime(e).Before(requested.Truncate(time.Second)) {
			continue
		}
		if newest == nil || eventTime(e).After(eventTime(newest)) {
			newest = e
		}
	}
	if newest == nil {
		return ""
	}
	return newest.Message
}

// eventTime is when an Event was last seen.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	default:
		return e.FirstTimestamp.Time
	}
}
