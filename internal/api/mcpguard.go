package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The guard in front of the MCP SDK's handler: it reads the one JSON-RPC
// message of a POST to /mcp before the SDK does, answers the protocol's
// own errors in JSON-RPC (docs/integrations.md, "Errors of the MCP
// endpoint"), and bounds what any answer may weigh.
//
//   - A batch (a JSON array) is refused whatever MCP-Protocol-Version
//     says: the current protocol dropped batches, and an older one would
//     let one small request ask for thousands of answers.
//   - Malformed JSON is -32700, a message that is not a JSON-RPC request
//     or notification -32600, a method this server does not serve -32601.
//   - The answer is held until it is complete; one larger than
//     mcpMaxResponseBytes is replaced by a JSON-RPC error.
//   - Whatever the SDK still refuses in plain text becomes a JSON-RPC
//     error -32600 carrying its reason.
//
// Client mistakes are logged at WARN with the request id, never at ERROR.

// mcpMaxResponseBytes bounds the body of every /mcp answer (1 MiB). The
// largest legitimate ones (a page of resources/list, 50 search results,
// 100 resolved cards, an assistant turn) are well under it.
const mcpMaxResponseBytes = 1 << 20

// mcpResourcePageSize is how many resources one resources/list page holds;
// the rest follow through nextCursor.
const mcpResourcePageSize = 50

// mcpCodeResponseTooLarge is the JSON-RPC error of an answer larger than
// mcpMaxResponseBytes (an implementation-defined server error; 13 for 413).
const mcpCodeResponseTooLarge = -32013

// mcpMethods are the methods /mcp serves (notifications included). Others
// (subscriptions, prompts, completions, logging) are -32601.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true,
	"tools/list": true, "tools/call": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/progress": true,
	"notifications/roots/list_changed": true,
}

// mcpFreeMethods do no work beyond the handshake and are not counted
// against the key's window; every other method is (mcpSurface.middleware).
var mcpFreeMethods = map[string]bool{"initialize": true, "ping": true}

// mcpEnvelope is the part of a JSON-RPC message the guard reads.
type mcpEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
}

// guard wraps the SDK's handler (see the comment at the top of the file).
func (m *mcpSurface) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				m.refuse(ctx, w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest,
					"The request body is larger than "+strconv.Itoa(maxBodyBytes)+" bytes (256 KiB).")
				return
			}
			m.refuse(ctx, w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "The request body could not be read.")
			return
		}
		trimmed := bytes.TrimLeft(body, " \t\r\n")
		if len(trimmed) > 0 && trimmed[0] == '[' {
			m.refuse(ctx, w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest,
				"JSON-RPC batches are not supported: send one message per request.")
			return
		}
		var env mcpEnvelope
		if err := json.Unmarshal(body, &env); err != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) {
				m.refuse(ctx, w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest,
					"The message is not a JSON-RPC request: "+cutEcho(err.Error()))
				return
			}
			m.refuse(ctx, w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "The request body is not valid JSON: "+cutEcho(err.Error()))
			return
		}
		if env.JSONRPC != "2.0" || env.Method == "" {
			m.refuse(ctx, w, http.StatusBadRequest, env.ID, jsonrpc.CodeInvalidRequest,
				`The message is not a JSON-RPC 2.0 request: it needs "jsonrpc":"2.0" and a method.`)
			return
		}
		if !mcpMethods[env.Method] {
			m.refuse(ctx, w, http.StatusOK, env.ID, jsonrpc.CodeMethodNotFound,
				"Method not found: "+strconv.Quote(cutEcho(env.Method))+". This server serves tools and resources.")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		held := &heldResponse{header: http.Header{}, limit: m.maxResponse()}
		next.ServeHTTP(held, r)
		m.release(ctx, w, held, env.ID)
	})
}

// release writes the SDK's answer: as it is when it is JSON within the
// bound, as a JSON-RPC error otherwise.
func (m *mcpSurface) release(ctx context.Context, w http.ResponseWriter, held *heldResponse, id json.RawMessage) {
	status := held.status
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case held.tooLarge:
		usageFrom(ctx).failedWith(http.StatusRequestEntityTooLarge)
		m.refuse(ctx, w, http.StatusOK, id, mcpCodeResponseTooLarge, "The answer would be larger than "+
			strconv.Itoa(held.limit)+" bytes; ask for less (a smaller limit, fewer tokens).")
		return
	case status >= 400 && held.header.Get("Content-Type") != "application/json":
		m.refuse(ctx, w, status, id, jsonrpc.CodeInvalidRequest, cutEcho(string(bytes.TrimSpace(held.body.Bytes()))))
		return
	}
	body := cutErrorEchoes(held.body.Bytes())
	h := w.Header()
	for k, v := range held.header {
		h[k] = v
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// cutErrorEchoes cuts the caller's input that a JSON-RPC error of the SDK
// quotes in its message (invalid params are quoted whole) to 200
// characters. Other answers are returned as they are.
func cutErrorEchoes(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"error":`)) {
		return body
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Error   *struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Error == nil {
		return body
	}
	cut := cutQuotedEchoes(msg.Error.Message)
	if cut == msg.Error.Message {
		return body
	}
	msg.Error.Message = cut
	out, err := json.Marshal(msg)
	if err != nil {
		return body
	}
	return out
}

// maxResponse is mcpMaxResponseBytes, or the smaller bound a test set.
func (m *mcpSurface) maxResponse() int {
	if m.s.mcpResponseLimit > 0 {
		return m.s.mcpResponseLimit
	}
	return mcpMaxResponseBytes
}

// refuse answers a JSON-RPC error (id null when the request had none) and
// logs the client's mistake at WARN.
func (m *mcpSurface) refuse(ctx context.Context, w http.ResponseWriter, status int, id json.RawMessage, code int64, message string) {
	m.s.Logger.LogAttrs(ctx, slog.LevelWarn, "MCP request refused", slog.String("request_id", RequestIDFrom(ctx)),
		slog.Int64("code", code), slog.String("reason", message))
	if status >= 400 {
		usageFrom(ctx).failedWith(status)
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(map[string]any{"status": status, "request_id": RequestIDFrom(ctx)})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message, "data": json.RawMessage(data)}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// heldResponse keeps the SDK's answer until it is complete, up to
// mcpMaxResponseBytes; past that it keeps nothing more and remembers that
// the answer was too large.
type heldResponse struct {
	limit    int
	header   http.Header
	status   int
	body     bytes.Buffer
	tooLarge bool
}

func (h *heldResponse) Header() http.Header { return h.header }

func (h *heldResponse) WriteHeader(code int) {
	if h.status == 0 {
		h.status = code
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	if h.tooLarge || h.body.Len()+len(b) > h.limit {
		h.tooLarge = true
		h.body.Reset()
		return len(b), nil
	}
	return h.body.Write(b)
}

// Flush does nothing: the answer leaves when it is complete.
func (h *heldResponse) Flush() {}
