package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
)

// Event is one server-sent event of a streamed chat turn: a HopEvent, a
// DeltaEvent, a FinalEvent or an ErrorEvent.
type Event interface {
	// Name is the SSE event name: hop, delta, final or error.
	Name() string
}

// HopEvent reports a tool call as it completes.
type HopEvent struct{ TraceItem }

// DeltaEvent carries the next piece of the answer text. Pieces are cut at
// word boundaries and never inside a citation token; concatenated, they
// are the final Response.
type DeltaEvent struct {
	Text string `json:"text"`
}

// FinalEvent carries the whole answer: exactly what Chat returns.
type FinalEvent struct{ ChatResponse }

// ErrorEvent is a failure after the stream started; the turn is not
// recorded. Err is the problem document the service sent.
type ErrorEvent struct{ Err *Error }

func (HopEvent) Name() string   { return "hop" }
func (DeltaEvent) Name() string { return "delta" }
func (FinalEvent) Name() string { return "final" }
func (ErrorEvent) Name() string { return "error" }

// ErrIncompleteStream is returned when a stream ends without a final or
// an error event.
var ErrIncompleteStream = errors.New("assistant: the stream ended before its final event")

// ChatStream sends one turn with Accept: text/event-stream and returns the
// events as they arrive. The request is made when the iteration starts;
// breaking out of the loop closes the connection.
//
// An answer that is not a stream (400, 401, 429, 502...) is retried as
// Chat is, then yielded once as (nil, *Error). An error event is yielded
// as (ErrorEvent, *Error): the same problem twice, so a loop that only
// checks err stops on it. A transport or decoding failure, or a stream cut
// before its final event (ErrIncompleteStream), is yielded as (nil, err).
// Nothing follows an error or a FinalEvent.
func (c *Client) ChatStream(ctx context.Context, req ChatRequest) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := request{method: "POST", path: "/api/v1/chat", body: req, accept: "text/event-stream", retried: true}
		resp, err := c.send(ctx, r)
		if err != nil {
			yield(nil, err)
			return
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			yield(nil, fmt.Errorf("assistant: expected an event stream, got %q", ct))
			return
		}
		for sse, err := range readEvents(resp.Body) {
			if err != nil {
				yield(nil, fmt.Errorf("assistant: reading the stream: %w", err))
				return
			}
			ev, err := c.decodeEvent(sse.name, sse.data, r)
			if err != nil {
				yield(nil, err)
				return
			}
			if ev == nil {
				continue // an event this client does not know
			}
			if e, ok := ev.(ErrorEvent); ok {
				yield(e, e.Err)
				return
			}
			if !yield(ev, nil) {
				return
			}
			if _, ok := ev.(FinalEvent); ok {
				return
			}
		}
		if ctx.Err() != nil {
			yield(nil, ctx.Err())
			return
		}
		yield(nil, ErrIncompleteStream)
	}
}

func (c *Client) decodeEvent(name, data string, r request) (Event, error) {
	rd := strings.NewReader(data)
	switch name {
	case "hop":
		var e HopEvent
		return e, c.decode(rd, &e.TraceItem, r)
	case "delta":
		var e DeltaEvent
		return e, c.decode(rd, &e, r)
	case "final":
		var e FinalEvent
		return e, c.decode(rd, &e.ChatResponse, r)
	case "error":
		e := &Error{}
		if err := json.Unmarshal([]byte(data), e); err != nil {
			return nil, fmt.Errorf("assistant: decoding an error event: %w", err)
		}
		e.StatusCode = e.Status
		return ErrorEvent{Err: e}, nil
	}
	return nil, nil
}

type sseEvent struct{ name, data string }

// readEvents parses server-sent events, data lines joined by newlines; a
// read error other than EOF ends it.
func readEvents(body io.Reader) iter.Seq2[sseEvent, error] {
	return func(yield func(sseEvent, error) bool) {
		br := bufio.NewReader(body)
		name, data, hasData := "", []string(nil), false
		for {
			line, err := br.ReadString('\n')
			if err != nil && !(errors.Is(err, io.EOF) && line != "") {
				if !errors.Is(err, io.EOF) {
					yield(sseEvent{}, err)
				}
				return
			}
			line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
			switch {
			case line == "":
				if hasData {
					if name == "" {
						name = "message"
					}
					if !yield(sseEvent{name, strings.Join(data, "\n")}, nil) {
						return
					}
				}
				name, data, hasData = "", nil, false
			case strings.HasPrefix(line, ":"):
				// a comment
			default:
				field, value, _ := strings.Cut(line, ":")
				value = strings.TrimPrefix(value, " ")
				switch field {
				case "event":
					name = value
				case "data":
					data, hasData = append(data, value), true
				}
			}
		}
	}
}
