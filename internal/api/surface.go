package api

import "net/http"

// The HTTP surface is a router of surfaces (routes.go): the root mux sends
// each request, by the prefix of its path, to the surface that owns it;
// a surface is a mux of its own routes wrapped in its own middleware
// chain. So a middleware applies to every request it sees and never asks
// the path whether it should (TestMiddlewareNeverAsksThePath).

// router is the root of the HTTP surface.
type router struct {
	mux      *http.ServeMux
	patterns []string // every route pattern of every surface, in order
}

func newRouter() *router { return &router{mux: http.NewServeMux()} }

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.mux.ServeHTTP(w, r) }

// surface returns a new surface whose routes run behind middleware, the
// first listed outermost.
func (rt *router) surface(middleware ...func(http.Handler) http.Handler) *surface {
	s := &surface{router: rt, mux: http.NewServeMux(), wrap: map[string]func(http.Handler) http.Handler{}}
	s.h = chain(s.mux, middleware...)
	return s
}

// mount gives the surface the requests whose path is one of paths (a path
// ending in "/" names a subtree, as in http.ServeMux).
func (rt *router) mount(s *surface, paths ...string) {
	for _, p := range paths {
		rt.mux.Handle(p, s)
	}
}

// pattern returns the pattern of the route that will serve r: the
// surface's own route, not the prefix that chose the surface ("" when no
// route matches).
func (rt *router) pattern(r *http.Request) string {
	h, p := rt.mux.Handler(r)
	if s, ok := h.(*surface); ok {
		_, p = s.mux.Handler(r)
	}
	return p
}

// surface is one part of the HTTP surface with its own middleware chain.
// It is also the mux huma registers that part's operations on.
type surface struct {
	router *router
	mux    *http.ServeMux
	h      http.Handler
	// wrap holds middleware of single routes, by pattern, applied when the
	// route is registered.
	wrap map[string]func(http.Handler) http.Handler
}

func (s *surface) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.ServeHTTP(w, r) }

// Handle registers a route of the surface.
func (s *surface) Handle(pattern string, h http.Handler) {
	s.router.patterns = append(s.router.patterns, pattern)
	if wrap := s.wrap[pattern]; wrap != nil {
		h = wrap(h)
	}
	s.mux.Handle(pattern, h)
}

func (s *surface) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	s.Handle(pattern, http.HandlerFunc(h))
}

// chain applies middleware so that the first listed is the outermost.
func chain(h http.Handler, middleware ...func(http.Handler) http.Handler) http.Handler {
	for i := len(middleware) - 1; i >= 0; i-- {
		h = middleware[i](h)
	}
	return h
}
