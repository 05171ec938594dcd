// Package blobstore keeps layer and config blobs by digest. Object storage is the source of truth;
// an optional local disk tier in front of it serves hot blobs without a redirect.
package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/opencontainers/go-digest"
)

// ErrBlobUnknown maps to the distribution-spec error code BLOB_UNKNOWN (HTTP 404).
var ErrBlobUnknown = errors.New("blob unknown to registry")

// PresignTTL is how long a redirect URL handed to a client stays valid.
const PresignTTL = 10 * time.Minute

// Backend is the object storage under the store: S3 in production, MinIO in `make dev`.
type Backend interface {
	Head(ctx context.Context, key string) (size int64, err error)
	PutMultipart(ctx context.Context, key string, r io.Reader) error
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
}

type Store struct {
	backend  Backend
	cacheDir string
}

func NewStore(b Backend, cacheDir string) *Store {
	return &Store{backend: b, cacheDir: cacheDir}
}

// blobKey shards by the first two hex characters: blobs/sha256/ab/abcdef...
func blobKey(d digest.Digest) string {
	return fmt.Sprintf("blobs/%s/%s/%s", d.Algorithm(), d.Encoded()[:2], d.Encoded())
}

// Stat returns the blob's size, or ErrBlobUnknown when the backend has no such key.
func (s *Store) Stat(ctx context.Context, d digest.Digest) (int64, error) {
	size, err := s.backend.Head(ctx, blobKey(d))
	if errors.Is(err, ErrBlobUnknown) {
		return 0, ErrBlobUnknown
	}
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", d, err)
	}
	return size, nil
}

// Put streams r to the backend. The caller has already checked that r hashes to d.
func (s *Store) Put(ctx context.Context, d digest.Digest, r io.Reader) error {
	return s.backend.PutMultipart(ctx, blobKey(d), r)
}

// Get answers a blob GET: the local copy when the disk tier has one, otherwise a presigned
// object-storage URL for the handler to answer with 307 Temporary Redirect.
func (s *Store) Get(ctx context.Context, d digest.Digest) (local *os.File, redirect string, err error) {
	if s.cacheDir != "" {
		if f, err := os.Open(filepath.Join(s.cacheDir, d.Encoded())); err == nil {
			return f, "", nil
		}
	}
	url, err := s.backend.PresignGet(ctx, blobKey(d), PresignTTL)
	return nil, url, err
}
