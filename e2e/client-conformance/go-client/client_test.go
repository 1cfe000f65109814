// The protocol's Go client (third_party/durable-streams/packages/client-go, built from the vendored source) against
// IQ-Stream's /v1/stream/ with JWTs in its per-request header options: create, append, a catch-up read from the
// start and from a saved offset, a live read (long-poll and SSE) resumed from a saved offset that gets each later
// append once and ends at the writer's closure, and the tokens' refusals. One IQ-Stream node, started by
// ../run-tests.sh with --jwt-secret: IQSTREAM_URL and IQSTREAM_JWT_SECRET name it.
package goclient

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	ds "github.com/durable-streams/durable-streams/packages/client-go"
)

func server(t *testing.T) (string, string) {
	url, secret := os.Getenv("IQSTREAM_URL"), os.Getenv("IQSTREAM_JWT_SECRET")
	if url == "" || secret == "" {
		t.Fatal("IQSTREAM_URL and IQSTREAM_JWT_SECRET must name an IQ-Stream node with JWT auth (../run-tests.sh)")
	}
	return url, secret
}

// token is an HS256 JWT with IQ-Stream's rights claim: each right in rights granted on path.
func token(secret, path string, rights ...string) map[string]string {
	b64 := func(v any) string {
		raw, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(raw)
	}
	claim := map[string][]string{}
	for _, r := range rights {
		claim[r] = []string{path}
	}
	head := b64(map[string]string{"alg": "HS256", "typ": "JWT"}) + "." +
		b64(map[string]any{"sub": "go-client", "exp": time.Now().Add(10 * time.Minute).Unix(), "iqstream": claim})
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(head))
	return map[string]string{"Authorization": "Bearer " + head + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))}
}

func uniquePath(name string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return "go/" + name + "-" + hex.EncodeToString(b)
}

// items decodes one chunk of a JSON stream (an array of values); an empty chunk has none.
func items(t *testing.T, data []byte) []map[string]any {
	if len(data) == 0 {
		return nil
	}
	var out []map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("a JSON chunk that is not an array of objects: %q: %v", data, err)
	}
	return out
}

func ns(from, to int) []map[string]any {
	var out []map[string]any
	for i := from; i < to; i++ {
		out = append(out, map[string]any{"n": float64(i)})
	}
	return out
}

// catchUp reads from offset to the tail without live mode: every item, and the offset to resume from.
func catchUp(t *testing.T, s *ds.Stream, headers map[string]string, offset ds.Offset) ([]map[string]any, ds.Offset) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := s.Read(ctx, ds.WithOffset(offset), ds.WithReadHeaders(headers))
	defer it.Close()
	var got []map[string]any
	for {
		chunk, err := it.Next()
		if errors.Is(err, ds.Done) {
			return got, it.Offset
		}
		if err != nil {
			t.Fatalf("catch-up read: %v", err)
		}
		got = append(got, items(t, chunk.Data)...)
		if chunk.UpToDate {
			return got, chunk.NextOffset
		}
	}
}

func appendN(t *testing.T, s *ds.Stream, headers map[string]string, from, to int) []ds.Offset {
	var offsets []ds.Offset
	for i := from; i < to; i++ {
		res, err := s.Append(context.Background(), []byte(fmt.Sprintf(`{"n":%d}`, i)), ds.WithAppendHeaders(headers))
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		offsets = append(offsets, res.NextOffset)
	}
	return offsets
}

func TestCreateAppendAndCatchUp(t *testing.T) {
	url, secret := server(t)
	path := uniquePath("catchup")
	pub, sub := token(secret, path, "publish"), token(secret, path, "subscribe")
	s := ds.NewClient().Stream(url + "/v1/stream/" + path)
	if err := s.Create(context.Background(), ds.WithContentType("application/json"), ds.WithCreateHeaders(pub)); err != nil {
		t.Fatalf("create: %v", err)
	}
	offsets := appendN(t, s, pub, 0, 5)
	for i := 1; i < len(offsets); i++ {
		if offsets[i] <= offsets[i-1] {
			t.Fatalf("offsets do not grow: %v", offsets)
		}
	}
	all, tail := catchUp(t, s, sub, ds.StartOffset)
	if !reflect.DeepEqual(all, ns(0, 5)) || tail != offsets[4] {
		t.Fatalf("catch-up from the start: %v ending at %s, want n 0..4 ending at %s", all, tail, offsets[4])
	}
	rest, _ := catchUp(t, s, sub, offsets[2])
	if !reflect.DeepEqual(rest, ns(3, 5)) {
		t.Fatalf("catch-up from the offset after n=2: %v, want n 3..4", rest)
	}
	meta, err := s.Head(context.Background(), ds.WithHeadHeaders(sub))
	if err != nil || meta.NextOffset != offsets[4] {
		t.Fatalf("head: %+v, %v; want the tail %s", meta, err, offsets[4])
	}
}

func TestLiveReadResumedFromSavedOffsetEndsAtClosure(t *testing.T) {
	for _, mode := range []ds.LiveMode{ds.LiveModeLongPoll, ds.LiveModeSSE} {
		t.Run(string(mode), func(t *testing.T) {
			url, secret := server(t)
			path := uniquePath("live")
			pub, sub := token(secret, path, "publish"), token(secret, path, "subscribe")
			s := ds.NewClient().Stream(url + "/v1/stream/" + path)
			if err := s.Create(context.Background(), ds.WithContentType("application/json"), ds.WithCreateHeaders(pub)); err != nil {
				t.Fatalf("create: %v", err)
			}
			appendN(t, s, pub, 0, 3)
			seen, saved := catchUp(t, s, sub, ds.StartOffset) // a reader that saved where it was
			if !reflect.DeepEqual(seen, ns(0, 3)) {
				t.Fatalf("catch-up: %v", seen)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			it := s.Read(ctx, ds.WithOffset(saved), ds.WithLive(mode), ds.WithReadHeaders(sub))
			defer it.Close()
			type end struct {
				got    []map[string]any
				offset ds.Offset
				err    error
			}
			done := make(chan end, 1)
			started := make(chan struct{})
			go func() {
				var got []map[string]any
				once := false
				for {
					chunk, err := it.Next()
					if !once {
						once = true
						close(started)
					}
					if errors.Is(err, ds.Done) {
						done <- end{got, it.Offset, nil}
						return
					}
					if err != nil {
						done <- end{got, it.Offset, err}
						return
					}
					got = append(got, items(t, chunk.Data)...)
					if chunk.StreamClosed {
						done <- end{got, chunk.NextOffset, nil}
						return
					}
				}
			}()
			if mode == ds.LiveModeLongPoll {
				<-started // the first long-poll answered (204 at the tail): the read is live before anything more is written
			}
			appendN(t, s, pub, 3, 6)
			closed, err := s.Close(context.Background(), ds.WithCloseData([]byte(`{"n":6}`)), ds.WithCloseHeaders(pub))
			if err != nil {
				t.Fatalf("close: %v", err)
			}
			r := <-done
			if r.err != nil {
				t.Fatalf("live read: %v (had %v)", r.err, r.got)
			}
			if !reflect.DeepEqual(r.got, ns(3, 7)) {
				t.Fatalf("live read from the saved offset: %v, want n 3..6, each once", r.got)
			}
			if r.offset != closed.FinalOffset {
				t.Fatalf("the read ended at %s, the closure at %s", r.offset, closed.FinalOffset)
			}
			_, err = s.Append(context.Background(), []byte(`{"n":7}`), ds.WithAppendHeaders(pub))
			if !errors.Is(err, ds.ErrStreamClosed) {
				t.Fatalf("append after the closure: %v, want ErrStreamClosed", err)
			}
		})
	}
}

func TestTokensAreChecked(t *testing.T) {
	url, secret := server(t)
	path := uniquePath("auth")
	s := ds.NewClient().Stream(url + "/v1/stream/" + path)
	status := func(err error) int {
		var se *ds.StreamError
		if errors.As(err, &se) {
			return se.StatusCode
		}
		t.Fatalf("not a StreamError: %v", err)
		return 0
	}
	if err := s.Create(context.Background(), ds.WithContentType("text/plain")); err == nil || status(err) != 401 {
		t.Fatalf("create without a token: %v, want 401", err)
	}
	if err := s.Create(context.Background(), ds.WithContentType("text/plain"), ds.WithCreateHeaders(token(secret, path, "publish"))); err != nil {
		t.Fatalf("create: %v", err)
	}
	_, err := s.Append(context.Background(), []byte("x"), ds.WithAppendHeaders(token(secret, path, "subscribe")))
	if err == nil || status(err) != 403 {
		t.Fatalf("append with a subscribe-only token: %v, want 403", err)
	}
	_, err = s.Head(context.Background(), ds.WithHeadHeaders(token(secret, path+"-other", "subscribe", "publish")))
	if err == nil || status(err) != 403 {
		t.Fatalf("head with another stream's token: %v, want 403", err)
	}
}
