// Package s3test runs an S3-compatible server in-process for tests
// (gofakes3, in memory, behind httptest), reached by the real S3 client of
// the AWS SDK over HTTP with path-style addressing: no real S3 is
// reachable from CI.
package s3test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is an in-memory S3.
type Server struct {
	URL    string // the endpoint, http://127.0.0.1:port
	Client *s3.Client

	mu       sync.Mutex
	requests map[string]int // by "METHOD ?query-keys"
	// Fail, if set, is asked about every request before it is served; a
	// non-zero status is returned instead, e.g. to make uploads fail.
	Fail atomic.Pointer[func(r *http.Request) int]
	// Delay is slept before each request is served (nanoseconds), to make
	// a client slow enough to be killed halfway.
	Delay atomic.Int64
}

// Region and credentials the server accepts (it checks none).
const (
	Region = "us-east-1"
	KeyID  = "s3test"
	Secret = "s3test-secret"
)

// New starts a server with the given buckets, stopped when the test ends.
func New(t testing.TB, buckets ...string) *Server {
	t.Helper()
	backend := s3mem.New()
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	s := &Server{requests: map[string]int{}}
	h := faker.Server()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := s.Delay.Load(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		if f := s.Fail.Load(); f != nil {
			if code := (*f)(r); code != 0 {
				w.WriteHeader(code)
				return
			}
		}
		s.count(r)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	s.Client = NewClient(ts.URL)
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// NewClient returns an S3 client for endpoint with path-style addressing.
func NewClient(endpoint string) *s3.Client {
	return s3.NewFromConfig(aws.Config{
		Region:      Region,
		Credentials: credentials.NewStaticCredentialsProvider(KeyID, Secret, ""),
	}, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
	})
}

func (s *Server) count(r *http.Request) {
	key := r.Method
	q := r.URL.Query()
	for _, k := range []string{"uploads", "uploadId", "partNumber", "list-type", "delete"} {
		if q.Has(k) {
			key += " ?" + k
		}
	}
	s.mu.Lock()
	s.requests[key]++
	s.mu.Unlock()
}

// Requests returns how many requests of a kind were served:
// "PUT", "PUT ?uploadId ?partNumber" (a part), "POST ?uploads" (a
// multipart upload started), "POST ?uploadId" (completed), "DELETE
// ?uploadId" (aborted), "GET ?list-type"...
func (s *Server) Requests(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[kind]
}

// Keys lists the objects of a bucket under prefix.
func (s *Server) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	var out []string
	p := s3.NewListObjectsV2Paginator(s.Client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			out = append(out, aws.ToString(o.Key))
		}
	}
	return out
}
