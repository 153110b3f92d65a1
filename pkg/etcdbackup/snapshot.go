package etcdbackup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"regexp"
	"slices"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Snapshot is a snapshot written to a store and verified there.
type Snapshot struct {
	Name string
	// Time is when it was taken, to the second (its name's).
	Time time.Time
	// Revision is the member's revision just before the snapshot was opened: the snapshot
	// holds it and possibly a few later ones.
	Revision int64
	// Size is the object's size in bytes, the appended hash included.
	Size int64
	// SHA256 is the hex sha256 of the whole object as stored.
	SHA256 string
}

// timeLayout is the time in a snapshot's name, UTC: root-20261128-101500.
const timeLayout = "20060102-150405"

// nameRE splits a snapshot's name into its base, its time and the suffix that tells apart
// two taken in one second.
var nameRE = regexp.MustCompile(`^(.+)-([0-9]{8}-[0-9]{6})(?:-([1-9][0-9]*))?$`)

// parseName answers a snapshot name's base, time and collision suffix (0 for none).
func parseName(name string) (base string, t time.Time, n int, ok bool) {
	m := nameRE.FindStringSubmatch(name)
	if m == nil {
		return "", time.Time{}, 0, false
	}
	t, err := time.ParseInLocation(timeLayout, m[2], time.UTC)
	if err != nil {
		return "", time.Time{}, 0, false
	}
	if m[3] != "" {
		if n, err = strconv.Atoi(m[3]); err != nil {
			return "", time.Time{}, 0, false
		}
	}
	return m[1], t, n, true
}

// NewName answers the name of a snapshot of base taken at t, <base>-<yyyymmdd-hhmmss> in
// UTC, with -1, -2, … appended when existing already holds that name.
func NewName(base string, t time.Time, existing []Object) (string, error) {
	name := base + "-" + t.UTC().Format(timeLayout)
	if err := ValidName(name); err != nil {
		return "", err
	}
	taken := map[string]bool{}
	for _, o := range existing {
		taken[o.Name] = true
	}
	candidate := name
	for i := 1; taken[candidate]; i++ {
		candidate = name + "-" + strconv.Itoa(i)
	}
	return candidate, nil
}

// Save takes a snapshot of the member at endpoint, to which client maint is connected
// (one endpoint: the snapshot is read from whichever member the client picks), streams it
// into store as <base>-<time>, and verifies it there with etcd's own hash check, read back
// from the store; a snapshot that fails it is deleted. The database is never held in memory.
func Save(ctx context.Context, maint clientv3.Maintenance, endpoint string, store Store, base string) (Snapshot, error) {
	return SaveAs(ctx, maint, endpoint, store, base, "")
}

// ErrExists is answered by SaveAs for a name the store already holds.
var ErrExists = errors.New("a snapshot of that name exists")

// CheckName refuses a name that is not a snapshot name of base: <base>-<yyyymmdd-hhmmss>,
// with an optional -<n>.
func CheckName(base, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if b, _, _, ok := parseName(name); !ok || b != base {
		return fmt.Errorf("snapshot name %q is not %s-<yyyymmdd-hhmmss>", name, base)
	}
	return nil
}

// SaveAs is Save under the given name, which must be a snapshot name of base (CheckName) that
// the store does not hold yet (ErrExists); an empty name is Save's, from the time.
func SaveAs(ctx context.Context, maint clientv3.Maintenance, endpoint string, store Store, base, name string) (Snapshot, error) {
	if name != "" {
		if err := CheckName(base, name); err != nil {
			return Snapshot{}, err
		}
	}
	// The revision comes from the member's Status just before the snapshot: the snapshot
	// stream carries no header, and the revision it holds is at least this one.
	status, err := maint.Status(ctx, endpoint)
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading the status of %s: %w", endpoint, err)
	}
	existing, err := store.List(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	now := time.Now().UTC().Truncate(time.Second)
	if name == "" {
		if name, err = NewName(base, now, existing); err != nil {
			return Snapshot{}, err
		}
	} else if slices.ContainsFunc(existing, func(o Object) bool { return o.Name == name }) {
		return Snapshot{}, fmt.Errorf("snapshot %s: %w", name, ErrExists)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := maint.SnapshotWithVersion(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("opening the snapshot of %s: %w", endpoint, err)
	}
	defer func() { _ = resp.Snapshot.Close() }()
	// The stream is counted, not hashed: the hashes are computed once, of what the store
	// holds, when it is read back.
	counted := &countingReader{r: resp.Snapshot}
	written, err := store.Put(ctx, name, counted)
	if err != nil {
		return Snapshot{}, fmt.Errorf("saving the snapshot of %s: %w", endpoint, err)
	}
	if written != counted.n {
		return Snapshot{}, fmt.Errorf("snapshot %s: the store took %d bytes of the %d streamed", name, written, counted.n)
	}

	stored, err := verify(ctx, store, name)
	if err == nil && stored.size != counted.n {
		err = fmt.Errorf("snapshot %s: %w: the store holds %d bytes, %d were written", name, ErrCorrupt, stored.size, counted.n)
	}
	if err != nil {
		// What failed its check is no snapshot: left under a snapshot's name, it would count
		// as one of the newest that Retain keeps, in place of a good one.
		if derr := store.Delete(ctx, name); derr != nil {
			return Snapshot{}, errors.Join(err, derr)
		}
		return Snapshot{}, fmt.Errorf("%w (deleted)", err)
	}
	return Snapshot{Name: name, Time: now, Revision: status.Header.GetRevision(), Size: stored.size, SHA256: stored.sha256}, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ErrCorrupt is wrapped by Verify's error for a snapshot that fails etcd's hash check.
var ErrCorrupt = errors.New("snapshot fails its hash check")

// Verify reads the snapshot name from store and checks it as etcd's restore does: a
// snapshot is the bbolt database followed by the sha256 of the database, so its size is
// the hash's 32 bytes more than a multiple of 512 (a database is whole pages), and the last
// 32 bytes are the sha256 of everything before them. A snapshot that fails either is
// ErrCorrupt.
func Verify(ctx context.Context, store Store, name string) error {
	_, err := verify(ctx, store, name)
	return err
}

type verified struct {
	size   int64
	sha256 string
}

func verify(ctx context.Context, store Store, name string) (verified, error) {
	rc, err := store.Get(ctx, name)
	if err != nil {
		return verified{}, err
	}
	defer func() { _ = rc.Close() }()
	size, appended, db, whole, err := splitHash(contextReader{ctx: ctx, r: rc})
	if err != nil {
		return verified{}, fmt.Errorf("reading snapshot %s: %w", name, err)
	}
	v := verified{size: size, sha256: hex.EncodeToString(whole)}
	if size%512 != sha256.Size {
		return v, fmt.Errorf("snapshot %s: %w: its %d bytes are no database of 512-byte sectors followed by a sha256", name, ErrCorrupt, size)
	}
	if !bytes.Equal(appended, db) {
		return v, fmt.Errorf("snapshot %s: %w: the database's sha256 is %x, the snapshot says %x", name, ErrCorrupt, db, appended)
	}
	return v, nil
}

// splitHash reads r to its end and answers its size, its last sha256.Size bytes, the
// sha256 of the bytes before them and the sha256 of the whole, holding back no more than
// those last bytes. It hashes once: the whole is the bytes before followed by the last ones.
func splitHash(r io.Reader) (size int64, appended, db, whole []byte, err error) {
	var h hash.Hash = sha256.New()
	buf := make([]byte, sha256.Size+64<<10)
	have := 0 // bytes of buf in use; never more than sha256.Size between reads
	for {
		n, err := r.Read(buf[have:])
		have += n
		size += int64(n)
		if have > sha256.Size {
			h.Write(buf[:have-sha256.Size])
			copy(buf, buf[have-sha256.Size:have])
			have = sha256.Size
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return size, nil, nil, nil, err
		}
	}
	appended = slices.Clone(buf[:have])
	db = h.Sum(nil) // Sum leaves h as it was
	h.Write(appended)
	return size, appended, db, h.Sum(nil), nil
}

// Retain keeps the newest keep snapshots of base in store, by the time in their names, and
// deletes its others; another base's snapshots (a store shared on purpose, such as the bucket
// of a setup restored from) and an object whose name is no snapshot's are left alone. It
// answers the names it deleted.
func Retain(ctx context.Context, store Store, base string, keep int) ([]string, error) {
	if keep < 1 {
		return nil, fmt.Errorf("retention must keep at least one snapshot, not %d", keep)
	}
	objs, err := store.List(ctx)
	if err != nil {
		return nil, err
	}
	type snap struct {
		name string
		t    time.Time
		n    int
	}
	var snaps []snap
	for _, o := range objs {
		if b, t, n, ok := parseName(o.Name); ok && b == base {
			snaps = append(snaps, snap{o.Name, t, n})
		}
	}
	// Newest first: by time, then by the suffix given to later ones of one second.
	slices.SortFunc(snaps, func(a, b snap) int {
		if c := b.t.Compare(a.t); c != 0 {
			return c
		}
		return b.n - a.n
	})
	var deleted []string
	for _, s := range snaps[min(keep, len(snaps)):] {
		if err := store.Delete(ctx, s.name); err != nil {
			return deleted, err
		}
		deleted = append(deleted, s.name)
	}
	slices.Sort(deleted)
	return deleted, nil
}
