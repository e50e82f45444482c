package api

import (
	"log/slog"
	"net/http"
	"strconv"
)

// A preview body is, nearly always, the plain shape a client writes:
// {"vertical":"...","free_text":"..."} or with "archetype_id", strings
// that need no escaping. huma would decode it twice (into a generic value
// to validate it against the schema, then into previewInput) before the
// handler runs, about a tenth of the request's CPU. plainPreviews reads
// that shape in one pass and answers it as previewJSON does; any other
// body (another or a repeated key, a missing vertical, an escape, a
// character outside printable ASCII, a free text past its 4,000
// characters, anything but strings, malformed JSON, a body past
// maxPlainPreviewBody) and any request the diagnosis refuses (an unknown
// vertical, both forms or neither) go to huma as they came, so every
// error keeps its status and problem document.

// maxPlainPreviewBody is the longest body plainPreviews reads itself: a
// free text of 4,000 characters and ids fit.
const maxPlainPreviewBody = 8 << 10

// maxPreviewFreeText is previewInput's maxLength of free_text.
const maxPreviewFreeText = 4000

// plainPreviews wraps POST /preview: a JSON body of the plain shape is
// answered here, in the bytes and headers previewJSON gives through huma;
// any other request goes to the handler with its body as it came.
func (s *Server) plainPreviews(next http.Handler) http.Handler {
	return smallJSONBodies(maxPlainPreviewBody, next, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if in, ok := parsePreviewBody(body); ok {
			// A refusal or failure is left to huma, which logs it.
			if answer, err := s.previewAnswerOf(r.Context(), &in, quietLogger); err == nil {
				writeFilled(w, answer.appendTo)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// quietLogger discards what it is given.
var quietLogger = slog.New(slog.DiscardHandler)

// writeFilled writes a 200 JSON answer that fill appends to an empty
// pooled buffer, in one write with its length (writeAssembled's answer,
// without huma).
func writeFilled(w http.ResponseWriter, fill func([]byte) []byte) {
	buf := answerBuffers.Get().(*[]byte)
	*buf = fill((*buf)[:0])
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(*buf)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(*buf)
	if cap(*buf) <= maxReusedBody {
		answerBuffers.Put(buf)
	}
}

// parsePreviewBody returns the input of a preview body of the plain shape:
// an object of the keys vertical (required), archetype_id and free_text,
// each once, in any order, whose values are plain strings
// (resolveParser.plainString); false for any other body.
func parsePreviewBody(body []byte) (previewInput, bool) {
	var in previewInput
	p := resolveParser{b: body}
	p.space()
	if !p.byte('{') {
		return in, false
	}
	var vertical, archetype, freeText bool
	for {
		k, ok := p.plainString()
		if !ok || !p.byte(':') {
			return in, false
		}
		v, ok := p.plainString()
		if !ok {
			return in, false
		}
		switch {
		case string(k) == "vertical" && !vertical:
			in.Body.Vertical, vertical = string(v), true
		case string(k) == "archetype_id" && !archetype:
			in.Body.ArchetypeID, archetype = string(v), true
		case string(k) == "free_text" && !freeText && len(v) <= maxPreviewFreeText:
			in.Body.FreeText, freeText = string(v), true
		default:
			return in, false
		}
		if p.byte(',') {
			continue
		}
		if !p.byte('}') {
			return in, false
		}
		break
	}
	return in, vertical && p.i == len(p.b)
}
