package api

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"

	"github.com/danielgtaylor/huma/v2"
)

// A resolve answer is a pure function of the request body and the
// knowledge it reads, and hover-card clients send the same batches again
// and again: every reader of an answer resolves its tokens. resolveMemo
// remembers the answers to the bodies seen last, for the knowledge version
// they were computed at; a body seen before is answered without decoding,
// validating or assembling anything. Only 200 answers to valid bodies are
// remembered, so a remembered body would be valid again.

// Bounds of the resolve memo: at most maxRememberedResolves answers (their
// cards are shared with cardCache: a few hundred bytes each), to bodies of at most maxRememberedResolveBody
// bytes (100 tokens with long slugs fit).
const (
	maxRememberedResolves    = 512
	maxRememberedResolveBody = 16 << 10
)

// resolveMemo maps request bodies to their answers at one knowledge
// version; a new version, or a full memo, starts it again. It is a map
// under a mutex rather than a memo.Bounded: most bodies a busy service
// sees are stored once and never asked for again, a load sync.Map handles
// worse than reads.
type resolveMemo struct {
	mu      sync.Mutex
	version int64
	answers map[string]*resolveAnswer // request body -> answer
}

// resolveAnswer is a resolve answer kept as its pieces: the JSON of each
// card (shared with cardCache) and of the unresolved tokens. Remembering
// pieces rather than the assembled body keeps a remembered answer small,
// and the body is assembled in a pooled buffer when it is written.
type resolveAnswer struct {
	cards [][]byte
	rest  []byte
}

// newResolveAnswer returns the answer of cards and rest.
func newResolveAnswer(cards [][]byte, rest []byte) *resolveAnswer {
	return &resolveAnswer{cards: cards, rest: rest}
}

// The constant pieces of a resolve answer.
var (
	resolvedStart   = []byte(`{"resolved":[`)
	unresolvedStart = []byte(`],"unresolved":`)
	answerEnd       = []byte("}\n")
)

// appendTo appends the answer's body to b.
func (a *resolveAnswer) appendTo(b []byte) []byte {
	b = append(b, resolvedStart...)
	for i, c := range a.cards {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c...)
	}
	b = append(b, unresolvedStart...)
	b = append(b, a.rest...)
	return append(b, answerEnd...)
}

// answerBuffers are the buffers resolve and preview answers are assembled
// in before their one write; one larger than maxReusedBody is not kept.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

// writeAssembled writes a 200 JSON answer that fill appends to an empty
// pooled buffer, in one write with its Content-Length.
func writeAssembled(hc huma.Context, fill func(b []byte) []byte) {
	buf := answerBuffers.Get().(*[]byte)
	*buf = fill((*buf)[:0])
	hc.SetHeader("Content-Type", "application/json")
	hc.SetHeader("Content-Length", strconv.Itoa(len(*buf)))
	hc.SetStatus(http.StatusOK)
	_, _ = hc.BodyWriter().Write(*buf)
	if cap(*buf) <= maxReusedBody {
		answerBuffers.Put(buf)
	}
}

// get returns the remembered answer to body at version.
func (m *resolveMemo) get(version int64, body []byte) (*resolveAnswer, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.version != version {
		return nil, false
	}
	answer, ok := m.answers[string(body)]
	return answer, ok
}

// put remembers answer as the answer to body at version.
func (m *resolveMemo) put(version int64, body []byte, answer *resolveAnswer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.version != version || m.answers == nil || len(m.answers) >= maxRememberedResolves {
		m.version, m.answers = version, make(map[string]*resolveAnswer, maxRememberedResolves)
	}
	m.answers[string(body)] = answer
}

// rememberedResolve is what rememberResolves passes on to resolveJSON for
// a body it may remember the answer to.
type rememberedResolve struct {
	version int64
	body    []byte
}

// rememberResolves wraps POST /resolve: a JSON body of at most
// maxRememberedResolveBody bytes whose answer is remembered for the current
// knowledge version is answered from memory; any other request goes to the
// handler as it came (a larger body, with its bytes read so far put back).
func (s *Server) rememberResolves(next http.Handler) http.Handler {
	// The body is in a pooled buffer, given back when the request is
	// done: nothing keeps it (the memo copies its key).
	return smallJSONBodies(maxRememberedResolveBody, next, func(w http.ResponseWriter, r *http.Request, body []byte) {
		version, err := s.Knowledge.KnowledgeVersion(r.Context())
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		if answer, ok := s.resolves.get(version, body); ok {
			writeJSONAnswer(w, answer)
			return
		}
		// A body of the plain shape is answered here, without huma's two
		// decodes (resolvefast.go); any other goes to huma.
		pooled := resolveRefs.Get().(*[]tokenRef)
		if refs, ok := appendResolveBody((*pooled)[:0], body); ok {
			answer, err := s.resolveAnswerOf(r.Context(), refs)
			clear(refs) // the pool keeps no slug
			*pooled = refs[:0]
			resolveRefs.Put(pooled)
			if err == nil {
				s.resolves.put(version, body, answer)
				writeJSONAnswer(w, answer)
				return
			}
		} // a body not of the plain shape leaves its list to the collector
		ctx := context.WithValue(r.Context(), rememberKey, rememberedResolve{version, body})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// writeJSONAnswer writes a 200 JSON answer in one write, with its length.
func writeJSONAnswer(w http.ResponseWriter, answer *resolveAnswer) { writeFilled(w, answer.appendTo) }

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// smallJSONBodies wraps next for the requests serve answers itself: a
// request whose body is JSON of at most limit bytes goes to serve with the
// body read into a pooled buffer (valid until serve returns) and r.Body set
// to read the same bytes again; any other request goes to next as it came
// (a larger body with the bytes read so far put back).
func smallJSONBodies(limit int, next http.Handler, serve func(w http.ResponseWriter, r *http.Request, body []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mediaType != "application/json" || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		held := resolveBodies.Get().(*[]byte)
		defer resolveBodies.Put(held)
		body, err := appendAtMost((*held)[:0], r.Body, limit+1)
		*held = body[:0]
		if err != nil || len(body) > limit {
			r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			next.ServeHTTP(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		serve(w, r, body)
	})
}

// resolveBodies are the buffers resolve bodies are read into; none grows
// past maxRememberedResolveBody+1 bytes.
var resolveBodies = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// appendAtMost appends what r reads to b, up to limit bytes in all.
func appendAtMost(b []byte, r io.Reader, limit int) ([]byte, error) {
	for len(b) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}
