package api

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/constraintlab/assistant/internal/assistant"
	"github.com/constraintlab/assistant/internal/chat"
)

// Asynchronous chat turns: POST /api/v1/chat with Prefer: respond-async
// is answered 202 with the turn's id and Location; the turn waits in the
// store (assistant.WebhookStore), bounded per workspace, until a runner
// (RunAsyncTurns, on any instance) runs it; GET /api/v1/chat/turns/{id}
// then returns its state and, once done, the chat response object, which
// the chat.turn.completed webhook event carries too. The submission is
// what counts against the key's limit (keyRateLimit admits the POST).

// asyncRetryAfter is the Retry-After of a 429 for a full queue.
const asyncRetryAfter = 5

// turnPath is where a turn is polled.
const turnPath = "/api/v1/chat/turns/"

// storedTurn is what the store keeps of a submitted turn until it runs:
// the request, in the API's words.
type storedTurn struct {
	Message  string             `json:"message"`
	History  []chat.HistoryItem `json:"history,omitempty"`
	Mode     string             `json:"mode"`
	Vertical string             `json:"vertical,omitempty"`
	Source   string             `json:"source,omitempty"`
}

// prefersAsync reports whether a Prefer header asks for respond-async
// (RFC 7240).
func prefersAsync(prefer string) bool {
	for _, p := range strings.Split(prefer, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(p), ";")
		if strings.EqualFold(strings.TrimSpace(name), "respond-async") {
			return true
		}
	}
	return false
}

// TurnState is the body of GET /api/v1/chat/turns/{id} and of the 202.
type TurnState struct {
	ID          string         `json:"id" example:"turn_4f8QhR2mX7bK1pZ9sT3vW6yA" doc:"The turn's id."`
	State       string         `json:"state" enum:"queued,running,succeeded,failed" doc:"queued (waiting), running, succeeded (response holds the answer) or failed (error holds the problem document)."`
	SubmittedAt time.Time      `json:"submitted_at"`
	CompletedAt *time.Time     `json:"completed_at,omitempty" doc:"When the turn ended (succeeded or failed)."`
	Response    *chat.Response `json:"response,omitempty" doc:"The chat response object, exactly as POST /api/v1/chat answers it, once the turn succeeded."`
	Error       *Problem       `json:"error,omitempty" doc:"The problem document of a failed turn (for example status 502 when the model provider was unavailable)."`
}

type turnInput struct {
	ID string `path:"id" maxLength:"64" doc:"The turn id from the 202's body or Location."`
}

type turnOutput struct {
	Body TurnState
}

// submitAsync stores a prepared turn and answers 202.
func (s *Server) submitAsync(ctx context.Context, req chat.Request) (*huma.StreamResponse, error) {
	key, _ := KeyFrom(ctx)
	body, _ := json.Marshal(storedTurn{Message: req.Message, History: req.History, Mode: req.Mode, Vertical: req.Vertical, Source: req.Source})
	t := assistant.AsyncTurn{ID: assistant.NewID("turn_"), Workspace: key.Workspace, KeyID: key.ID, State: assistant.TurnQueued,
		Request: body, SubmittedAt: s.Now().UTC()}
	queue := s.AsyncQueue
	if queue <= 0 {
		queue = DefaultAsyncQueue
	}
	if err := s.Async.SubmitTurn(ctx, t, queue); err != nil {
		if assistant.ErrorCode(err) == assistant.ERateLimited {
			return nil, rateLimited(ctx, asyncRetryAfter, "This workspace already has its most asynchronous turns waiting or running. Retry once some have completed.")
		}
		return nil, problemFromError(ctx, s.Logger, err)
	}
	if s.AsyncWake != nil {
		s.AsyncWake()
	}
	state := TurnState{ID: t.ID, State: t.State, SubmittedAt: t.SubmittedAt}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		hctx.SetHeader("Content-Type", "application/json")
		hctx.SetHeader("Location", turnPath+t.ID)
		hctx.SetHeader("Preference-Applied", "respond-async")
		hctx.SetStatus(http.StatusAccepted)
		json.NewEncoder(hctx.BodyWriter()).Encode(state)
	}}, nil
}

// DefaultAsyncQueue bounds a workspace's waiting and running turns when
// Server.AsyncQueue is 0.
const DefaultAsyncQueue = 100

// getTurn answers GET /api/v1/chat/turns/{id}: a turn of the key's
// workspace.
func (s *Server) getTurn(ctx context.Context, in *turnInput) (*turnOutput, error) {
	key, _ := KeyFrom(ctx)
	t, err := s.Async.Turn(ctx, key.Workspace, in.ID)
	if err != nil {
		return nil, problemFromError(ctx, s.Logger, err)
	}
	out := &turnOutput{Body: TurnState{ID: t.ID, State: t.State, SubmittedAt: t.SubmittedAt, CompletedAt: t.CompletedAt}}
	if t.Response != nil {
		var r chat.Response
		if err := json.Unmarshal(t.Response, &r); err != nil {
			return nil, problemFromError(ctx, s.Logger, err)
		}
		out.Body.Response = &r
	}
	if t.Problem != nil {
		var p Problem
		if err := json.Unmarshal(t.Problem, &p); err != nil {
			return nil, problemFromError(ctx, s.Logger, err)
		}
		out.Body.Error = &p
	}
	return out, nil
}

// AsyncRunner runs asynchronous turns: Workers at a time on this
// instance, each leased (Lease, 30 seconds by default, renewed while the
// turn runs) so that a turn whose instance died runs again elsewhere.
type AsyncRunner struct {
	Server  *Server
	Owner   string
	Workers int
	Lease   time.Duration
	Poll    time.Duration
	// Completed is called after a turn completed (its event is written):
	// it wakes the webhook worker.
	Completed func()

	wake chan struct{}
	once sync.Once
}

func (a *AsyncRunner) init() {
	a.once.Do(func() {
		a.wake = make(chan struct{}, 1)
		if a.Workers <= 0 {
			a.Workers = 4
		}
		if a.Lease <= 0 {
			a.Lease = 30 * time.Second
		}
		if a.Poll <= 0 {
			a.Poll = time.Second
		}
	})
}

// Wake makes the runner claim at once (a turn was just submitted).
func (a *AsyncRunner) Wake() {
	a.init()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Run runs turns until ctx ends, then waits for those in flight.
func (a *AsyncRunner) Run(ctx context.Context) {
	a.init()
	s := a.Server
	slots := make(chan struct{}, a.Workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		free := a.Workers - len(slots)
		var turns []assistant.AsyncTurn
		if free > 0 {
			var err error
			turns, err = s.Async.ClaimTurns(ctx, a.Owner, s.Now(), a.Lease, free)
			if err != nil && ctx.Err() == nil {
				s.Logger.Warn("async turns: claim failed", "err", err)
			}
		}
		for _, t := range turns {
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots; a.Wake() }()
				a.run(context.WithoutCancel(ctx), t)
			}()
		}
		if len(turns) > 0 && len(turns) == free {
			continue
		}
		timer := time.NewTimer(a.Poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-a.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// run runs one turn and completes it, renewing its lease every third of
// the lease while it runs.
func (a *AsyncRunner) run(ctx context.Context, t assistant.AsyncTurn) {
	s := a.Server
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(a.Lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := s.Async.RenewTurn(ctx, t.ID, a.Owner, s.Now().Add(a.Lease)); err != nil {
					s.Logger.Warn("async turns: renewing a lease failed", "turn", t.ID, "err", err)
				}
			}
		}
	}()
	var st storedTurn
	r := assistant.TurnResult{}
	review := func() {} // kept once the turn is completed, so only once
	if err := json.Unmarshal(t.Request, &st); err != nil {
		p, _ := json.Marshal(newProblem(ctx, http.StatusInternalServerError, "The turn could not be read back."))
		r.Problem = p
	} else {
		req := chat.Request{Message: st.Message, History: st.History, Mode: st.Mode,
			Vertical: st.Vertical, Source: st.Source, Workspace: t.Workspace}
		resp, citations, err := s.Chat.Run(ctx, req, nil)
		if err != nil {
			p := s.chatProblem(ctx, err)
			r.Problem, _ = json.Marshal(p)
		} else {
			r.Response, _ = json.Marshal(resp)
			r.Citations = citations
			review = func() { s.keepForReview(ctx, req, resp, t.KeyID, assistant.ReviewSurfaceAsync) }
		}
	}
	r.At = s.Now().UTC()
	ok, err := s.Async.CompleteTurn(ctx, t.ID, a.Owner, r)
	switch {
	case err != nil:
		// The lease runs out and the turn runs again.
		s.Logger.Warn("async turns: completing a turn failed", "turn", t.ID, "err", err)
	case !ok:
		s.Logger.Info("async turns: the turn's lease went to another runner", "turn", t.ID)
	default:
		review()
		if a.Completed != nil {
			a.Completed()
		}
	}
}

// registerAsync documents the 202 of POST /api/v1/chat and registers GET
// /api/v1/chat/turns/{id}.
func registerAsync(api huma.API, chatOp *huma.Operation, authenticated func(huma.Operation) huma.Operation,
	get func(context.Context, *turnInput) (*turnOutput, error)) {
	chatOp.Description += " Send `Prefer: respond-async` to run the turn in the background: the answer is 202 with the turn's id and a `Location` " +
		"to poll (GET /api/v1/chat/turns/{id}); the turn counts against the key's limit when submitted, and a workspace's waiting turns are bounded (429 beyond)."
	chatOp.Responses["202"] = &huma.Response{
		Description: "The turn is queued (Prefer: respond-async). Location is where to poll it.",
		Headers: map[string]*huma.Param{
			"Location":           {Description: "GET this path for the turn's state.", Schema: &huma.Schema{Type: huma.TypeString}},
			"Preference-Applied": {Description: "respond-async", Schema: &huma.Schema{Type: huma.TypeString}},
		},
		Content: map[string]*huma.MediaType{"application/json": {
			Schema: api.OpenAPI().Components.Schemas.Schema(reflectTurnState, true, "TurnState"),
		}},
	}
	huma.Register(api, authenticated(huma.Operation{
		OperationID: "getChatTurn", Method: http.MethodGet, Path: turnPath + "{id}", Tags: []string{"Chat"},
		Summary:     "An asynchronous turn's state",
		Description: "The state of a turn submitted with `Prefer: respond-async` by a key of the same workspace: queued, running, succeeded (with the chat response object, exactly as POST /api/v1/chat answers) or failed (with the problem document). Completed turns are kept for 7 days.",
		Errors:      []int{http.StatusNotFound},
	}), get)
}

var reflectTurnState = reflect.TypeOf(TurnState{})
