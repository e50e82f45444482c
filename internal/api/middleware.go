package api

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/constraintlab/assistant/internal/assistant"
)

// ctxKey is the type of the package's context keys. Every key is listed
// here, so that no two share a value (TestContextKeysAreDistinct). Each
// carries a value down to the layers below the one that set it; none is
// filled in below to be read above.
type ctxKey int

const (
	requestIDKey ctxKey = iota // the request id (requestID)
	routeKey                   // string, the pattern of the route that serves the request (observe)
	keyCtxKey                  // the authenticated API key (authenticate)
	usageCtxKey                // *usage, the request's usage row, which handlers annotate (authenticate)
	rememberKey                // rememberedResolve (rememberResolves)
)

// RequestIDFrom returns the request id stored by the requestID middleware.
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// requestID gives every request an id: the caller's X-Request-Id when it is
// a short safe token, a new random one otherwise. It is echoed in the
// response header and in every problem document.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID.MatchString(id) {
			var b [12]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey, id)))
	})
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets streamed responses (D9) through every wrapper.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// routeFrom returns the pattern of the route that serves the request, as
// observe found it before serving ("" when no route matches).
func routeFrom(ctx context.Context) string {
	p, _ := ctx.Value(routeKey).(string)
	return p
}

// observe logs one line per request and records its metrics. routeOf
// names the route that will serve the request (router.pattern); it is
// asked before serving and passed down, never filled in below. The line
// names the client's address (ClientIP, without the port) and, when a key
// authenticated the request, its id and workspace, which the
// authenticator gives the response (nameCaller); never the key itself.
func observe(logger *slog.Logger, m *metrics, now func() time.Time, routeOf func(*http.Request) string, trusted []netip.Prefix) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := now()
			pattern := routeOf(r)
			ow := &observedWriter{statusWriter: statusWriter{ResponseWriter: w}}
			next.ServeHTTP(ow, r.WithContext(context.WithValue(r.Context(), routeKey, pattern)))
			elapsed := now().Sub(start)
			status := ow.status
			if status == 0 {
				status = http.StatusOK
			}
			if pattern == "" {
				pattern = "unmatched"
			}
			m.requests.WithLabelValues(pattern, r.Method, strconv.Itoa(status)).Inc()
			m.latency.WithLabelValues(pattern, r.Method).Observe(elapsed.Seconds())
			// The line is built only when it is written (LogAttrs asks the
			// same question first): at a level above info, as under load
			// tests, it costs nothing.
			if !logger.Enabled(r.Context(), slog.LevelInfo) {
				return
			}
			remote := r.RemoteAddr
			if a := ClientIP(r, trusted); a.IsValid() {
				remote = a.String()
			}
			attrs := []slog.Attr{
				slog.String("request_id", RequestIDFrom(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("route", pattern),
				slog.Int("status", status),
				slog.Int64("bytes", ow.bytes),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.String("remote", remote),
			}
			if ow.keyID != "" {
				attrs = append(attrs, slog.String("key_id", ow.keyID), slog.String("workspace", ow.workspace))
			}
			if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
				attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
			}
			logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		})
	}
}

// observedWriter is the response as observe sees it: its status and size,
// and the key it was served to.
type observedWriter struct {
	statusWriter
	keyID, workspace string
}

// callerNamer is a response that records the key it is served to.
type callerNamer interface {
	nameCaller(keyID, workspace string)
}

func (w *observedWriter) nameCaller(keyID, workspace string) { w.keyID, w.workspace = keyID, workspace }

// nameCaller tells the response, through the writers wrapped around it,
// which key it is served to (for observe's log line). It is how the
// authenticator answers "who asked" on the response itself, as it answers
// with a status: the request context only carries values down.
func nameCaller(w http.ResponseWriter, key assistant.APIKey) {
	for {
		if n, ok := w.(callerNamer); ok {
			n.nameCaller(key.ID, key.Workspace)
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// errorWriter writes a problem in the shape of one surface: a problem
// document (writeProblem) or OpenAI's error object (writeOpenAIProblem).
// Each layer of a surface writes its errors with the surface's writer, so
// an error is written once, never rewritten above.
type errorWriter func(http.ResponseWriter, *Problem)

// recoverer turns a panic into a 500 and logs it; the server keeps
// serving.
func recoverer(logger *slog.Logger, writeErr errorWriter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					logger.ErrorContext(r.Context(), "panic while serving", "request_id", RequestIDFrom(r.Context()), "panic", fmt.Sprint(v))
					writeErr(w, newProblem(r.Context(), http.StatusInternalServerError, "An internal error occurred."))
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// problemWriter replaces any error response that is not already a problem
// document with one of the same status: the mux's 404 and 405, anything
// the standard library or another library writes as text/plain. Errors
// written by this package are problem documents already and pass as they
// are. No /api/ route ever answers an error as text or HTML (D1).
type problemWriter struct {
	http.ResponseWriter
	r         *http.Request
	replaced  bool
	committed bool
}

func (w *problemWriter) WriteHeader(code int) {
	if w.committed {
		return
	}
	w.committed = true
	if code >= 400 {
		w.Header().Set("Cache-Control", cacheNoStore) // errors are never cached (D1)
	}
	ct := w.Header().Get("Content-Type")
	if code >= 400 && !strings.HasPrefix(ct, "application/problem+json") {
		w.replaced = true
		writeProblem(w.ResponseWriter, newProblem(w.r.Context(), code, defaultDetail(w.r, code, w.Header().Get("Allow"))))
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *problemWriter) Write(b []byte) (int, error) {
	if !w.committed {
		w.WriteHeader(http.StatusOK)
	}
	if w.replaced {
		return len(b), nil // the original error body is dropped
	}
	return w.ResponseWriter.Write(b)
}

func (w *problemWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *problemWriter) Flush() {
	if !w.committed {
		w.WriteHeader(http.StatusOK)
	}
	if !w.replaced {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func defaultDetail(r *http.Request, code int, allow string) string {
	switch code {
	case http.StatusNotFound:
		return fmt.Sprintf("No endpoint matches %s %s. The endpoints are listed at /api/assistant/openapi.json.", cutEcho(r.Method), cutEcho(r.URL.Path))
	case http.StatusMethodNotAllowed:
		return fmt.Sprintf("%s is not allowed on %s; allowed: %s.", cutEcho(r.Method), cutEcho(r.URL.Path), allow)
	case http.StatusRequestEntityTooLarge:
		return "The request body is too large."
	}
	return http.StatusText(code) + "."
}

// problems is the error writer of the problem-document surfaces: see
// problemWriter.
func problems(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&problemWriter{ResponseWriter: w, r: r}, r)
	})
}

// corsAnyOrigin lets a page of any origin call the surface: the public
// /api/assistant/ endpoints (D27) and the embeddable /components/, which
// pages anywhere load.
func corsAnyOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		corsAnswer(next, w, r)
	})
}

// corsFrom lets pages of the configured origins call the surface
// (/api/v1/, D27); a request from any other origin gets no CORS header.
func corsFrom(origins []string) func(http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, o := range origins {
		allowed[o] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			if origin == "" || !allowed[origin] {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Add("Vary", "Origin")
			corsAnswer(next, w, r)
		})
	}
}

// corsAnswer completes the CORS headers of an allowed origin and answers
// a preflight itself.
func corsAnswer(next http.Handler, w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Expose-Headers", "ETag, Retry-After, RateLimit, RateLimit-Policy, X-Request-Id")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-None-Match, X-Request-Id, X-Try-It-Now")
		h.Set("Access-Control-Max-Age", "86400")
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	next.ServeHTTP(w, r)
}

// ClientIP returns the address a request comes from: the socket peer, or,
// when the peer is a trusted proxy, the right-most address of
// X-Forwarded-For that is not itself a trusted proxy (D13). Addresses a
// client writes to the left of that are never believed.
func ClientIP(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := parseAddr(r.RemoteAddr)
	if !peer.IsValid() || !isTrusted(peer, trusted) {
		return peer
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		addr := parseAddr(strings.TrimSpace(hops[i]))
		if !addr.IsValid() {
			return peer // a malformed hop: stop believing the header there
		}
		if !isTrusted(addr, trusted) {
			return addr
		}
	}
	return peer
}

func parseAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientKey is the rate-limit key of an address: the address itself for
// IPv4, its /64 network for IPv6 (one subscriber usually holds a whole /64).
func clientKey(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// publicRateLimit applies the soft and hard per-client limits of D13 to
// the public /api/assistant/ endpoints (preflights excepted). Past the soft limit requests are
// served with RateLimit headers showing 0 remaining; past the hard limit
// they get 429 (D2). Under the soft limit no per-client header is sent, so
// edge-cached responses carry no per-client state.
//
// A limiter that cannot decide admits the request and logs why
// (assistant.TieredLimiter: fail open).
func publicRateLimit(lim assistant.TieredLimiter, trusted []netip.Prefix, logger *slog.Logger, m *metrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if lim == nil {
			return next
		}
		pol := lim.Policy()
		if pol.Soft <= 0 && pol.Hard <= 0 {
			return next
		}
		policy := rateLimitPolicy(pol)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodOptions {
				next.ServeHTTP(w, r)
				return
			}
			d, err := lim.Admit(r.Context(), clientKey(ClientIP(r, trusted)))
			m.limit("public", d, err)
			if err != nil {
				logger.WarnContext(r.Context(), "public rate limiter failed; admitting", "err", err)
				next.ServeHTTP(w, r)
				return
			}
			if d.Allowed && !d.OverSoft {
				next.ServeHTTP(w, r)
				return
			}
			secs := ceilSeconds(d.RetryAfter)
			h := w.Header()
			h.Set("RateLimit-Policy", policy)
			if !d.Allowed {
				h.Set("RateLimit", fmt.Sprintf(`"hard";r=0;t=%d`, secs))
				writeProblem(w, rateLimited(r.Context(), secs, fmt.Sprintf(
					"This client made more than %d requests in the last %s. Retry after %d seconds.",
					pol.Hard, pol.Window, max(1, secs))))
				return
			}
			h.Set("RateLimit", fmt.Sprintf(`"soft";r=0;t=%d`, secs))
			next.ServeHTTP(w, r)
		})
	}
}

func rateLimitPolicy(pol assistant.TieredPolicy) string {
	w := int(pol.Window / time.Second)
	var parts []string
	if pol.Soft > 0 {
		parts = append(parts, fmt.Sprintf(`"soft";q=%d;w=%d`, pol.Soft, w))
	}
	if pol.Hard > 0 {
		parts = append(parts, fmt.Sprintf(`"hard";q=%d;w=%d`, pol.Hard, w))
	}
	return strings.Join(parts, ", ")
}

func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// Cache-Control values of D14.
const (
	cachePublic  = "public, max-age=60, stale-while-revalidate=60"
	cacheNoStore = "no-store"
)

// noStore marks every answer of the surface no-store: authenticated
// answers belong to one workspace and are never cached (D14).
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", cacheNoStore)
		next.ServeHTTP(w, r)
	})
}

// publicCaching sets the caching headers of D14 on the public endpoints
// and the /components/: POSTs and try-it-now calls are no-store;
// successful GETs get the public policy, a strong ETag and 304 for a
// matching If-None-Match. A handler that sets its own ETag (a static
// file, whose tag is computed once at start) is streamed as it writes;
// otherwise the body is buffered and the ETag is its hash.
func publicCaching(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tryItNow := r.Header.Get("X-Try-It-Now") == "1"
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Cache-Control", cacheNoStore)
			next.ServeHTTP(w, r)
			return
		}
		policy := cachePublic
		if tryItNow {
			policy = cacheNoStore
		}
		bw := &cachingWriter{w: w, policy: policy, body: heldBodies.Get().(*bytes.Buffer)}
		defer releaseHeldBody(bw.body)
		next.ServeHTTP(bw, r)
		if !bw.decided && w.Header().Get("ETag") != "" {
			bw.WriteHeader(http.StatusOK) // a HEAD answered with headers only
		}
		if bw.passthrough {
			return
		}
		status := bw.status
		if status == 0 {
			status = http.StatusOK
		}
		h := w.Header()
		if status != http.StatusOK {
			w.WriteHeader(status)
			w.Write(bw.body.Bytes())
			return
		}
		etag := strongETag(bw.body.Bytes())
		h.Set("ETag", etag)
		h.Set("Cache-Control", policy)
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			for _, k := range []string{"Content-Type", "Content-Length"} {
				h.Del(k)
			}
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Length", strconv.Itoa(bw.body.Len()))
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			w.Write(bw.body.Bytes())
		}
	})
}

// etagMatches implements the weak comparison of If-None-Match (RFC 9110
// 13.1.2): any listed tag equal to ours, ignoring W/, or "*".
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// cachingWriter decides at the response's first byte: when the handler
// has set an ETag it passes the response through (with the cache policy
// on success); otherwise it holds the response so that its ETag can be
// computed before any byte is sent.
type cachingWriter struct {
	w           http.ResponseWriter
	policy      string
	decided     bool
	passthrough bool
	status      int
	body        *bytes.Buffer // from heldBodies
}

// heldBodies are the buffers publicCaching holds answers in, reused: an
// answer is written out before its buffer is given back.
var heldBodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxReusedBody is the largest buffer given back to heldBodies; a larger
// one (a rare, very long answer) is left to the collector.
const maxReusedBody = 256 << 10

func releaseHeldBody(b *bytes.Buffer) {
	if b.Cap() <= maxReusedBody {
		b.Reset()
		heldBodies.Put(b)
	}
}

func (c *cachingWriter) Header() http.Header { return c.w.Header() }

func (c *cachingWriter) WriteHeader(code int) {
	if c.decided {
		return
	}
	c.decided, c.status = true, code
	if c.w.Header().Get("ETag") != "" {
		c.passthrough = true
		if code == http.StatusOK || code == http.StatusNotModified {
			c.w.Header().Set("Cache-Control", c.policy)
		}
		c.w.WriteHeader(code)
	}
}

func (c *cachingWriter) Write(b []byte) (int, error) {
	if !c.decided {
		c.WriteHeader(http.StatusOK)
	}
	if c.passthrough {
		return c.w.Write(b)
	}
	return c.body.Write(b)
}

// errHijack is returned if anything tries to hijack a buffered response.
var errHijack = errors.New("hijacking is not supported")

func (c *cachingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) { return nil, nil, errHijack }
