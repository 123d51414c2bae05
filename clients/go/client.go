// Client: the connection settings (server, token, retry policy) that every
// call shares, and the options that set them.
package jobd

import (
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Version is this client's version, the same as the server it ships with.
const Version = "0.1.0"

// DefaultServer is used when neither WithServer nor $JOBD_SERVER says.
const DefaultServer = "http://127.0.0.1:8080"

// Client calls a jobd server's HTTP API (docs/API.md). It is safe for
// concurrent use. Schedules, Queues and Workflows group the calls on those
// objects.
type Client struct {
	server  string
	token   string
	http    *http.Client
	retries int
	base    time.Duration
	cap     time.Duration
	agent   string
	// noWait is set once the server has answered ?wait= with
	// invalid_query: it does not offer it, so Wait polls from then on.
	noWait atomic.Bool

	Schedules *Schedules
	Queues    *Queues
	Workflows *Workflows
}

// ClientOption configures a Client (New).
type ClientOption func(*Client)

// WithServer sets the server's base URL (default $JOBD_SERVER, else
// http://127.0.0.1:8080).
func WithServer(url string) ClientOption {
	return func(c *Client) { c.server = strings.TrimRight(url, "/") }
}

// WithToken sets the bearer token (default $JOBD_TOKEN; "" sends none).
func WithToken(token string) ClientOption { return func(c *Client) { c.token = token } }

// WithHTTPClient sets the http.Client the requests go through (default: a
// client of its own with no overall timeout: long polls and waits hold a
// request open on purpose; cancel through the context instead).
func WithHTTPClient(h *http.Client) ClientOption { return func(c *Client) { c.http = h } }

// WithRetry sets how requests that are safe to repeat are retried after a
// network error or a 503: at most retries more times, after full-jitter
// delays random(0, min(cap, base × 2^n)) (a Retry-After header wins).
// Default 4, 100ms, 5s. WithRetry(0, 0, 0) turns retries off.
func WithRetry(retries int, base, cap time.Duration) ClientOption {
	return func(c *Client) { c.retries, c.base, c.cap = retries, base, cap }
}

// WithUserAgent sets the User-Agent header (default "jobd-go/VERSION").
func WithUserAgent(ua string) ClientOption { return func(c *Client) { c.agent = ua } }

// New returns a client of the server named by $JOBD_SERVER with the token
// of $JOBD_TOKEN, unless options say otherwise.
func New(opts ...ClientOption) *Client {
	c := &Client{
		server:  strings.TrimRight(os.Getenv("JOBD_SERVER"), "/"),
		token:   os.Getenv("JOBD_TOKEN"),
		retries: 4,
		base:    100 * time.Millisecond,
		cap:     5 * time.Second,
		agent:   "jobd-go/" + Version,
	}
	if c.server == "" {
		c.server = DefaultServer
	}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		c.http = &http.Client{Transport: t}
	}
	c.Schedules = &Schedules{c}
	c.Queues = &Queues{c}
	c.Workflows = &Workflows{c}
	return c
}

// Server returns the base URL the client talks to.
func (c *Client) Server() string { return c.server }
