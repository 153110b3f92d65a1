package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kcp-setups/apiserver/internal/localstack"
	"github.com/kcp-setups/apiserver/pkg/etcdbackup"
)

// The snapshot benchmark's database: snapshotKeys values of snapshotValue bytes (200 MiB),
// random so that nothing compresses them, and the rounds of each way of saving it.
const (
	snapshotKeys   = 2000
	snapshotValue  = 100 << 10
	snapshotRounds = 3
)

// BenchmarkSnapshot measures, in one run, how fast etcdbackup.Save takes a snapshot of a
// real etcd member (the pinned etcd, a process of its own) into a directory, the snapshot
// verified by etcd's hash check read back from the directory, next to `etcdctl snapshot
// save` of the same database into the same directory (the anchor: etcd's own client, which
// writes the file and syncs it, and checks nothing). The two alternate, round by round, and
// the figures are the medians. Each round also saves to versitygw on loopback (TLS, SigV4,
// its files on the same disk), to show what S3 costs beside a directory.
func BenchmarkSnapshot(b *testing.B) {
	e := newEntry("snapshot")
	ctx, cancel := context.WithTimeout(b.Context(), 20*time.Minute)
	defer cancel()
	etcdctl, err := localstack.ToolBin("etcdctl")
	if err != nil {
		b.Fatal(err)
	}
	url, err := startBenchEtcd(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close() }()

	start := time.Now()
	if err := fillEtcd(ctx, c); err != nil {
		b.Fatal(err)
	}
	status, err := c.Status(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("bench: snapshot: %d keys of %d KiB written in %s; the database is %.0f MB\n",
		snapshotKeys, snapshotValue>>10, time.Since(start).Round(time.Second), float64(status.DbSize)/1e6)

	out := b.TempDir()
	store, err := etcdbackup.NewDirStore(filepath.Join(out, "store"))
	if err != nil {
		b.Fatal(err)
	}
	s3, err := localstack.StartS3(ctx, localstack.S3Options{Dir: filepath.Join(out, "s3")})
	if err != nil {
		b.Fatal(err)
	}
	defer s3.Stop()
	s3store, err := etcdbackup.NewS3Store(etcdbackup.S3Config{Endpoint: s3.Endpoint, Bucket: s3.Bucket, Region: s3.Region,
		AccessKeyID: s3.AccessKeyID, SecretAccessKey: s3.SecretAccessKey, CABundle: s3.CAPEM})
	if err != nil {
		b.Fatal(err)
	}
	var anchor, saved, savedS3 []float64 // MB/s
	var heapDir, heapS3 uint64           // the most the heap grew during a Save
	var size int64
	for round := range snapshotRounds {
		file := filepath.Join(out, "etcdctl.db")
		t0 := time.Now()
		cmd := exec.CommandContext(ctx, etcdctl, "--endpoints="+url, "snapshot", "save", file)
		if output, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("etcdctl snapshot save: %v\n%s", err, output)
		}
		took := time.Since(t0)
		info, err := os.Stat(file)
		if err != nil {
			b.Fatal(err)
		}
		anchor = append(anchor, float64(info.Size())/1e6/took.Seconds())
		_ = os.Remove(file)

		t0 = time.Now()
		heap := watchHeap()
		snap, err := etcdbackup.Save(ctx, c.Maintenance, url, store, "bench")
		heapDir = max(heapDir, heap())
		if err != nil {
			b.Fatal(err)
		}
		tookSave := time.Since(t0)
		saved = append(saved, float64(snap.Size)/1e6/tookSave.Seconds())
		size = snap.Size
		if err := store.Delete(ctx, snap.Name); err != nil {
			b.Fatal(err)
		}

		t0 = time.Now()
		heap = watchHeap()
		snap, err = etcdbackup.Save(ctx, c.Maintenance, url, s3store, "bench")
		heapS3 = max(heapS3, heap())
		if err != nil {
			b.Fatal(err)
		}
		tookS3 := time.Since(t0)
		savedS3 = append(savedS3, float64(snap.Size)/1e6/tookS3.Seconds())
		if err := s3store.Delete(ctx, snap.Name); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("bench: snapshot: round %d: etcdctl snapshot save %.0f MB in %s (%.0f MB/s), etcdbackup.Save to a directory in %s (%.0f MB/s), to S3 in %s (%.0f MB/s)\n",
			round+1, float64(info.Size())/1e6, took.Round(time.Millisecond), anchor[round],
			tookSave.Round(time.Millisecond), saved[round], tookS3.Round(time.Millisecond), savedS3[round])
	}
	a, s := median(anchor), median(saved)
	e.add(b, "snapshot-size", float64(size)/1e6, "MB")
	e.add(b, "etcdctl-snapshot-save", a, "etcdctl-MB/s")
	e.add(b, "etcdbackup-save", s, "save-MB/s")
	e.add(b, "save/etcdctl", s/a, "x")
	s3rate := median(savedS3)
	e.add(b, "etcdbackup-save-s3", s3rate, "save-s3-MB/s")
	e.add(b, "save-s3/etcdctl", s3rate/a, "s3-x")
	e.ratio("a snapshot of %.0f MB to a directory, verified: etcdbackup.Save %.0f MB/s = %.2f× etcdctl snapshot save (%.0f MB/s, unverified), medians of %d rounds (goal: at least 0.8×)",
		float64(size)/1e6, s, s/a, a, snapshotRounds)
	e.ratio("the same to versitygw over TLS on loopback, verified by reading it back: %.0f MB/s = %.2f× etcdctl snapshot save", s3rate, s3rate/a)
	e.add(b, "save-heap-growth", float64(heapDir)/1e6, "heap-MB")
	e.add(b, "save-s3-heap-growth", float64(heapS3)/1e6, "s3-heap-MB")
	e.ratio("memory: the heap grew by at most %.1f MB during a Save to a directory, %.1f MB to S3, for a snapshot of %.0f MB",
		float64(heapDir)/1e6, float64(heapS3)/1e6, float64(size)/1e6)
	e.save(b)
}

// startBenchEtcd runs the pinned etcd as a process of its own, data in dir, on loopback
// without TLS (both ways of saving use the same connection), and answers its client URL.
func startBenchEtcd(ctx context.Context, dir string) (string, error) {
	bin, err := localstack.ToolBin("etcd")
	if err != nil {
		return "", err
	}
	clientPort, err := localstack.FreePort()
	if err != nil {
		return "", err
	}
	peerPort, err := localstack.FreePort()
	if err != nil {
		return "", err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	p, err := localstack.StartProcess(dir, "etcd", bin,
		"--name=bench", "--data-dir="+filepath.Join(dir, "data"),
		"--listen-client-urls="+url, "--advertise-client-urls="+url,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer, "--initial-cluster=bench="+peer,
		"--quota-backend-bytes="+strconv.Itoa(2<<30), "--log-level=warn")
	if err != nil {
		return "", err
	}
	context.AfterFunc(ctx, p.Stop)
	return url, localstack.Poll(ctx, "etcd to serve", time.Minute, []*localstack.Process{p}, func(ctx context.Context) (bool, error) {
		return localstack.HTTPOK(ctx, http.DefaultClient, url+"/health")
	})
}

// fillEtcd writes the benchmark's keys from 8 clients at once.
func fillEtcd(ctx context.Context, c *clientv3.Client) error {
	keys := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			value := make([]byte, snapshotValue)
			for i := range keys {
				_, _ = rand.Read(value)
				if _, err := c.Put(ctx, fmt.Sprintf("/registry/bench/%05d", i), string(value)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var err error
send:
	for i := range snapshotKeys {
		select {
		case keys <- i:
		case err = <-errs:
			break send
		}
	}
	close(keys)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs
	}
	return err
}

// watchHeap samples the heap every 5 ms until the function it answers is called, which
// answers how far the heap grew above where it was at the start.
func watchHeap() func() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base, peak := m.HeapAlloc, m.HeapAlloc
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return peak - base
	}
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
