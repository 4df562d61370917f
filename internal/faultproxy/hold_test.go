package faultproxy

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Hold holds the calls it names: a client that waits gets the answer late,
// one that gives up gets nothing and nothing is forwarded.
func TestHold(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := startProxy(t, up.srv.URL, Config{Hold: func(op string, n int) time.Duration {
		if op == "BatchWriteItem" && n < 2 {
			return 300 * time.Millisecond
		}
		return 0
	}})
	c := client(p.URL())

	// The first call: its client gives up before the hold ends.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.BatchWriteItem(ctx, batch("a", 1)); err == nil {
		t.Fatal("a call held past its client's deadline succeeded")
	}
	// The second: its client waits.
	start := time.Now()
	if _, err := c.BatchWriteItem(context.Background(), batch("b", 1)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("the second call was answered after %v, want it held 300ms", d)
	}
	// The third is not held; nor is another operation.
	if _, err := c.BatchWriteItem(context.Background(), batch("c", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String("t")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // the first call's hold ends meanwhile
	s := p.Stats()
	if s.Held != 2 || s.Abandoned != 1 || len(up.got()) != 2 {
		t.Errorf("held %d, abandoned %d, %d items forwarded; want 2 held, 1 abandoned, 2 forwarded (b and c)", s.Held, s.Abandoned, len(up.got()))
	}
}
