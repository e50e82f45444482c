package api

import "net/http"

// HandlerAndRoutes exposes the served patterns to the black-box tests.
func (s *Server) HandlerAndRoutes() (http.Handler, []string) { return s.handler() }

// CitationsComponent is the embedded <assistant-citations> module.
var CitationsComponent = citationsComponent

// StrongETag is the ETag the service gives a body.
var StrongETag = strongETag
