package api

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"

	"github.com/constraintlab/assistant/internal/memo"
)

// A resolve answer is a pure function of the request body and the
// knowledge it reads, and hover-card clients send the same batches again
// and again: every reader of an answer resolves its tokens. resolveMemo
// remembers the answers to the bodies seen last, for the knowledge version
// they were computed at; a body seen before is answered without decoding,
// validating or assembling anything. Only 200 answers to valid bodies are
// remembered, so a remembered body would be valid again.

// Bounds of the resolve memo: at most maxRememberedResolves answers (about
// 30 KB each for 20 tokens), to bodies of at most maxRememberedResolveBody
// bytes (100 tokens with long slugs fit). When full it starts again.
const (
	maxRememberedResolves    = 512
	maxRememberedResolveBody = 16 << 10
)

// resolveMemo maps a request body, at a knowledge version, to its answer.
// Answers of earlier versions are never asked for again and go when the
// memo next starts again.
type resolveMemo struct {
	once    sync.Once
	answers *memo.Bounded[resolveKey, []byte]
}

func (m *resolveMemo) bounded() *memo.Bounded[resolveKey, []byte] {
	m.once.Do(func() { m.answers = &memo.Bounded[resolveKey, []byte]{Max: maxRememberedResolves} })
	return m.answers
}

type resolveKey struct {
	version int64
	body    string
}

// get returns the remembered answer to body at version.
func (m *resolveMemo) get(version int64, body []byte) ([]byte, bool) {
	return m.bounded().Load(resolveKey{version, string(body)})
}

// put remembers answer as the answer to body at version.
func (m *resolveMemo) put(version int64, body, answer []byte) {
	m.bounded().Store(resolveKey{version, string(body)}, answer)
}

// rememberedResolve is what rememberResolves passes on to resolveJSON for
// a body it may remember the answer to.
type rememberedResolve struct {
	version int64
	body    []byte
}

const rememberKey ctxKey = 100

// rememberResolves wraps POST /resolve: a JSON body of at most
// maxRememberedResolveBody bytes whose answer is remembered for the current
// knowledge version is answered from memory; any other request goes to the
// handler as it came (a larger body, with its bytes read so far put back).
func (s *Server) rememberResolves(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mediaType != "application/json" || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRememberedResolveBody+1))
		if err != nil || len(body) > maxRememberedResolveBody {
			r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			next.ServeHTTP(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		version, err := s.Knowledge.KnowledgeVersion(r.Context())
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		if answer, ok := s.resolves.get(version, body); ok {
			writeJSONAnswer(w, answer)
			return
		}
		ctx := context.WithValue(r.Context(), rememberKey, rememberedResolve{version, body})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// writeJSONAnswer writes a 200 JSON answer in one write, with its length.
func writeJSONAnswer(w http.ResponseWriter, answer []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(answer)
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
