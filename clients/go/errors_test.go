// The cases of clients/cases.json about errors, tokens and retries: a stub
// HTTP server answers each error code; a second real server has tokens.
package jobd_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"jobd"
)

var kinds = map[string]error{
	"BadRequest": jobd.ErrBadRequest, "Unauthorized": jobd.ErrUnauthorized, "Forbidden": jobd.ErrForbidden,
	"NotFound": jobd.ErrNotFound, "Conflict": jobd.ErrConflict, "StaleAttempt": jobd.ErrStaleAttempt,
	"Unavailable": jobd.ErrUnavailable, "ServerError": jobd.ErrServer,
}

func TestCase_errors_typed(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		ErrorCodes []struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
			Kind   string `json:"kind"`
		} `json:"error_codes"`
	}
	if err := json.Unmarshal(data, &file); err != nil || len(file.ErrorCodes) == 0 {
		t.Fatalf("cases.json: %v", err)
	}
	// GET /v1/jobs/N answers error_codes[N-1], naming a field for even N.
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/v1/jobs/"))
		ec := file.ErrorCodes[n-1]
		field := any(nil)
		if n%2 == 0 {
			field = "field_" + ec.Code
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ec.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"code": ec.Code, "message": "message of " + ec.Code, "field": field}})
	}))
	defer stub.Close()
	c := jobd.New(jobd.WithServer(stub.URL), jobd.WithRetry(0, 0, 0))
	for i, ec := range file.ErrorCodes {
		kind, ok := kinds[ec.Kind]
		if !ok {
			t.Errorf("kind %q of %s has no sentinel in this client", ec.Kind, ec.Code)
			continue
		}
		_, err := c.Get(context.Background(), int64(i+1))
		var e *jobd.Error
		if !errors.Is(err, kind) || !errors.As(err, &e) {
			t.Errorf("%d %s: got %v, want %s", ec.Status, ec.Code, err, ec.Kind)
			continue
		}
		for name, other := range kinds {
			if other != kind && errors.Is(err, other) && !(kind == jobd.ErrStaleAttempt && other == jobd.ErrConflict) {
				t.Errorf("%s also matches %s", ec.Code, name)
			}
		}
		wantField := ""
		if (i+1)%2 == 0 {
			wantField = "field_" + ec.Code
		}
		if e.Status != ec.Status || e.Code != ec.Code || e.Message != "message of "+ec.Code || e.Field != wantField {
			t.Errorf("%s: kept %+v", ec.Code, e)
		}
	}
	// And from the real server: an invalid field is named.
	_, err = client().Enqueue(context.Background(), "bad type!", nil)
	var e *jobd.Error
	if !errors.Is(err, jobd.ErrBadRequest) || !errors.As(err, &e) || e.Code != "invalid_field" || e.Field != "type" {
		t.Fatalf("enqueue of a bad type: %v", err)
	}
}

func TestCase_auth_token(t *testing.T) {
	admin, reader := "admin-token-0123456789abcdef", "read-token-0123456789abcdef"
	tokens := filepath.Join(tmpDir, "tokens")
	if err := os.WriteFile(tokens, []byte(admin+" admin\n"+reader+" read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, url, err := startServer(dbURL, "tokens", "--tokens", tokens)
	if err != nil {
		t.Fatal(err)
	}
	defer stopServer(srv)
	ctx := ctxT(t)
	none := jobd.New(jobd.WithServer(url), jobd.WithToken(""))
	if _, err := none.Enqueue(ctx, "t.auth", nil); !errors.Is(err, jobd.ErrUnauthorized) {
		t.Fatalf("no token: %v", err)
	}
	if id, err := none.Whoami(ctx); err != nil || id.Role != "none" || !id.Tokens {
		t.Fatalf("whoami without a token: %v %+v", err, id)
	}
	t.Setenv("JOBD_SERVER", url)
	t.Setenv("JOBD_TOKEN", admin)
	env := jobd.New()
	if env.Server() != url {
		t.Fatalf("JOBD_SERVER not used: %s", env.Server())
	}
	j, err := env.Enqueue(ctx, "t.auth", nil, jobd.WithQueue(uniq("auth")))
	if err != nil {
		t.Fatalf("with JOBD_TOKEN: %v", err)
	}
	if id, err := env.Whoami(ctx); err != nil || id.Role != "admin" || !id.TokenSent {
		t.Fatalf("whoami: %v %+v", err, id)
	}
	ro := jobd.New(jobd.WithToken(reader))
	if _, err := ro.Get(ctx, j.ID); err != nil {
		t.Fatalf("read token get: %v", err)
	}
	if _, err := ro.Cancel(ctx, j.ID); !errors.Is(err, jobd.ErrForbidden) {
		t.Fatalf("read token cancel: %v", err)
	}
}

func TestCase_retry_safe_requests(t *testing.T) {
	t.Parallel()
	var gets, posts atomic.Int32
	var failPosts atomic.Int32 // how many POSTs answer 503 before one succeeds
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		job := `{"id": 7, "queue": "default", "type": "t", "payload": {}, "status": "pending"}`
		unavailable := func() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			fmt.Fprint(w, `{"error": {"code": "store_unavailable", "message": "the store is unavailable", "field": null}}`)
		}
		if r.Method == "GET" {
			switch gets.Add(1) {
			case 1: // a dropped connection
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			case 2:
				unavailable()
				return
			}
			fmt.Fprint(w, job)
			return
		}
		if posts.Add(1) <= failPosts.Load() {
			unavailable()
			return
		}
		w.WriteHeader(201)
		fmt.Fprint(w, job)
	}))
	defer stub.Close()
	ctx := ctxT(t)
	c := jobd.New(jobd.WithServer(stub.URL), jobd.WithRetry(4, 10*time.Millisecond, 50*time.Millisecond))
	j, err := c.Get(ctx, 7)
	if err != nil || j.ID != 7 || gets.Load() != 3 {
		t.Fatalf("get through a dropped connection and a 503: %v, %d requests", err, gets.Load())
	}
	failPosts.Store(1)
	_, err = c.Enqueue(ctx, "t", nil)
	if !errors.Is(err, jobd.ErrUnavailable) || posts.Load() != 1 {
		t.Fatalf("enqueue without a key after a 503: %v, %d requests (want 1)", err, posts.Load())
	}
	posts.Store(0)
	j, err = c.Enqueue(ctx, "t", nil, jobd.WithIdempotencyKey("k-1"))
	if err != nil || j.ID != 7 || posts.Load() != 2 {
		t.Fatalf("enqueue with a key after a 503: %v, %d requests (want 2)", err, posts.Load())
	}
}
