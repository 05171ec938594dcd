package blobstore

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// PartSize is the multipart chunk size. S3 allows 10,000 parts, so one blob tops out at 625 GiB.
const PartSize = 64 << 20

type S3Backend struct {
	client *s3.Client
	bucket string
}

func NewS3Backend(ctx context.Context, bucket string) (*S3Backend, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	return &S3Backend{client: s3.NewFromConfig(cfg), bucket: bucket}, err
}

func (b *S3Backend) Head(ctx context.Context, key string) (int64, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.bucket, Key: &key})
	var nf *types.NotFound
	if errors.As(err, &nf) {
		return 0, ErrBlobUnknown
	} else if err != nil {
		return 0, err
	}
	return aws.ToInt64(out.ContentLength), nil
}

// PutMultipart uploads r in PartSize parts, 4 in flight. A failed part aborts the upload here; an upload
// abandoned by a crashed process stays in the bucket (and on the bill) until AbortStale finds it.
func (b *S3Backend) PutMultipart(ctx context.Context, key string, r io.Reader) error {
	up := manager.NewUploader(b.client, func(u *manager.Uploader) {
		u.PartSize = PartSize
		u.Concurrency = 4
		u.LeavePartsOnError = false
	})
	_, err := up.Upload(ctx, &s3.PutObjectInput{Bucket: &b.bucket, Key: &key, Body: r})
	return err
}

// AbortStale aborts multipart uploads initiated before cutoff; it needs s3:ListBucketMultipartUploads.
func (b *S3Backend) AbortStale(ctx context.Context, cutoff time.Time) (aborted int, err error) {
	list, err := b.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &b.bucket})
	if err != nil {
		return 0, err
	}
	for _, u := range list.Uploads {
		stale := u.Initiated != nil && u.Initiated.Before(cutoff)
		if stale && b.abort(ctx, aws.ToString(u.Key), u.UploadId) == nil {
			aborted++
		}
	}
	return aborted, nil
}

func (b *S3Backend) abort(ctx context.Context, key string, id *string) error {
	_, err := b.client.AbortMultipartUpload(ctx,
		&s3.AbortMultipartUploadInput{Bucket: &b.bucket, Key: &key, UploadId: id})
	return err
}

func (b *S3Backend) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	req, err := s3.NewPresignClient(b.client).PresignGetObject(ctx,
		&s3.GetObjectInput{Bucket: &b.bucket, Key: &key}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", err
	}
	return req.URL, nil
}
