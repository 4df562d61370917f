package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3 is what an export calls on an S3 client: *s3.Client fits. Data files
// are written with multipart uploads (package transfermanager), which
// become visible only when complete.
type S3 interface {
	transfermanager.S3APIClient
	DeleteObject(ctx context.Context, params *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	ListMultipartUploads(ctx context.Context, params *s3.ListMultipartUploadsInput, optFns ...func(*s3.Options)) (*s3.ListMultipartUploadsOutput, error)
}

var _ S3 = (*s3.Client)(nil)

// s3Store is a bucket and prefix.
type s3Store struct {
	w      Where
	client S3
	tm     *transfermanager.Client
}

// DefaultPartSize is the size of an uploaded part of a data file.
const DefaultPartSize = 8 << 20

// UploadOptions tune the uploads of data files: a file of PartSize or more
// goes up as a multipart upload of PartSize parts, a smaller one as one
// PutObject.
type UploadOptions struct {
	// PartSize is the size of each uploaded part in bytes (at least 5 MiB).
	// Default 8 MiB. Concurrency is the parts in flight per file. Default 4.
	// Memory is about PartSize × (Concurrency + 1).
	PartSize    int64
	Concurrency int
}

func newS3Store(w Where, client S3, o UploadOptions) *s3Store {
	tm := transfermanager.New(client, func(opts *transfermanager.Options) {
		opts.PartSizeBytes = cmp.Or(o.PartSize, DefaultPartSize)
		// The transfer manager sends a body under its threshold (16 MiB by
		// default) as one PutObject, ignoring the part size: a file goes up
		// as a multipart upload of PartSize parts from one part on, so that
		// --part-size means what it says and a small file is held in memory
		// only up to a part.
		opts.MultipartUploadThreshold = opts.PartSizeBytes
		opts.Concurrency = 4
		if o.Concurrency > 0 {
			opts.Concurrency = o.Concurrency
		}
	})
	return &s3Store{w: w, client: client, tm: tm}
}

func (s *s3Store) where() Where { return s.w }

func (s *s3Store) create(ctx context.Context, name string) (pendingFile, error) {
	pr, pw := io.Pipe()
	f := &s3File{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		_, err := s.tm.UploadObject(ctx, &transfermanager.UploadObjectInput{
			Bucket: aws.String(s.w.Bucket),
			Key:    aws.String(s.w.key(name)),
			Body:   pr,
		})
		if err != nil {
			f.err = fmt.Errorf("export: upload %s: %w", s.w.key(name), err)
		}
		// Unblock a writer still writing when the upload failed.
		pr.CloseWithError(errors.Join(f.err, errUploadEnded))
	}()
	return f, nil
}

var errUploadEnded = errors.New("export: upload ended")

// s3File streams into an upload. The object appears only when the upload
// completes (for a multipart upload, CompleteMultipartUpload); an aborted
// or crashed one leaves no object.
type s3File struct {
	pw   *io.PipeWriter
	done chan struct{}
	err  error
	once sync.Once
}

func (f *s3File) Write(p []byte) (int, error) { return f.pw.Write(p) }

func (f *s3File) commit() error {
	f.pw.Close()
	<-f.done
	return f.err
}

var errAborted = errors.New("export: file aborted")

func (f *s3File) abort() {
	f.once.Do(func() {
		f.pw.CloseWithError(errAborted) // the uploader aborts its multipart upload
		<-f.done
	})
}

func (s *s3Store) put(ctx context.Context, name string, data []byte) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.w.Bucket), Key: aws.String(s.w.key(name)),
		Body: strings.NewReader(string(data)), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return fmt.Errorf("export: put %s: %w", s.w.key(name), err)
	}
	return nil
}

func (s *s3Store) get(ctx context.Context, name string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.w.Bucket), Key: aws.String(s.w.key(name))})
	if err != nil {
		var nsk *s3types.NoSuchKey
		if errors.As(err, &nsk) {
			return nil, fmt.Errorf("export: %s: %w", s.w.key(name), fs.ErrNotExist)
		}
		return nil, fmt.Errorf("export: get %s: %w", s.w.key(name), err)
	}
	return out.Body, nil
}

func (s *s3Store) list(ctx context.Context, dir string) ([]string, error) {
	prefix := s.w.key(dir) + "/"
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.w.Bucket), Prefix: aws.String(prefix)})
	var out []string
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("export: list s3://%s/%s: %w", s.w.Bucket, prefix, err)
		}
		for _, o := range page.Contents {
			rel := strings.TrimPrefix(aws.ToString(o.Key), prefix)
			if rel != "" && !strings.Contains(rel, "/") {
				out = append(out, dir+"/"+rel)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

func (s *s3Store) remove(ctx context.Context, name string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.w.Bucket), Key: aws.String(s.w.key(name))})
	if err != nil {
		return fmt.Errorf("export: delete %s: %w", s.w.key(name), err)
	}
	return nil
}

// cleanup aborts the unfinished multipart uploads of data files that a
// crashed export left (they cost storage until aborted; a bucket lifecycle
// rule AbortIncompleteMultipartUpload does the same for exports never
// resumed).
func (s *s3Store) cleanup(ctx context.Context) error {
	prefix := s.w.key(dataDir) + "/"
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(s.w.Bucket), Prefix: aws.String(prefix)}
	for {
		out, err := s.client.ListMultipartUploads(ctx, in)
		var api smithy.APIError
		if errors.As(err, &api) && api.ErrorCode() == "NoSuchUpload" {
			return nil // some S3-compatible stores say so when there are none
		}
		if err != nil {
			return fmt.Errorf("export: list unfinished uploads under s3://%s/%s: %w", s.w.Bucket, prefix, err)
		}
		for _, u := range out.Uploads {
			if _, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(s.w.Bucket), Key: u.Key, UploadId: u.UploadId}); err != nil {
				return fmt.Errorf("export: abort the unfinished upload of %s: %w", aws.ToString(u.Key), err)
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			return nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
