package main

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// binaryPath is where the server is in the image, and its entrypoint.
	binaryPath = "/kcp-setups-apiserver"
	// nonRootUser is the image's user, as the install manifests' runAsUser and runAsGroup:
	// distroless's nonroot, so existing policies that allow it allow this image.
	nonRootUser = "65532:65532"
)

// file is one entry of a layer; a path ending in / is a directory.
type file struct {
	path string
	mode int64
	data []byte
}

// baseFiles is the minimal root file system the server needs: a user and group of its own
// (so getpwuid and the logs name it), a home, and a world-writable /tmp for the
// in-memory self-signed certificate's fallback and client-go's caches. No shell, no
// package manager and no CA bundle: the server reaches only the host's kube-apiserver and
// its etcd, through CAs it is given (the ServiceAccount's, --etcd-cafile).
func baseFiles() []file {
	passwd := strings.Join([]string{
		"root:x:0:0:root:/root:/sbin/nologin",
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin",
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin",
	}, "\n") + "\n"
	group := "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
	return []file{
		{path: "etc/", mode: 0o755},
		{path: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "etc/group", mode: 0o644, data: []byte(group)},
		// Go's resolver reads the hosts file before DNS only when nsswitch says so.
		{path: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{path: "home/", mode: 0o755},
		{path: "home/nonroot/", mode: 0o700},
		{path: "root/", mode: 0o700},
		{path: "tmp/", mode: 0o1777},
	}
}

// layer is a layer of files, every entry dated created and owned by root except the
// non-root user's home, in the order given.
func layer(files []file, created time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name:    strings.TrimPrefix(f.path, "/"),
			Mode:    f.mode,
			ModTime: created,
			Format:  tar.FormatPAX,
		}
		if strings.HasPrefix(h.Name, "home/nonroot") {
			h.Uid, h.Gid, h.Uname, h.Gname = 65532, 65532, "nonroot", "nonroot"
		} else {
			h.Uname, h.Gname = "root", "root"
		}
		if strings.HasSuffix(f.path, "/") {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
