package api

import (
	"net/http"
	"sync"
)

// The HTTP surface is a router of surfaces (routes.go): the root mux sends
// each request, by the prefix of its path, to the surface that owns it;
// a surface is a mux of its own routes wrapped in its own middleware
// chain. So a middleware applies to every request it sees and never asks
// the path whether it should (TestMiddlewareNeverAsksThePath).

// router is the root of the HTTP surface.
type router struct {
	mux      *http.ServeMux
	patterns []string // every route pattern of every surface, in order

	// found remembers pattern's answers by what the muxes match on (the
	// routes are all registered before the first request), for up to
	// maxRememberedPaths requests' method, host and path.
	mu    sync.RWMutex
	found map[routeQuery]string
}

// routeQuery is what ServeMux matches a request on.
type routeQuery struct{ method, host, path, rawPath string }

// maxRememberedPaths bounds router.found: paths are the clients' to
// choose, and past the bound the muxes are asked each time.
const maxRememberedPaths = 4096

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
	q := routeQuery{r.Method, r.Host, r.URL.Path, r.URL.RawPath}
	rt.mu.RLock()
	p, ok := rt.found[q]
	rt.mu.RUnlock()
	if ok {
		return p
	}
	p = rt.lookup(r)
	rt.mu.Lock()
	if len(rt.found) < maxRememberedPaths {
		if rt.found == nil {
			rt.found = map[routeQuery]string{}
		}
		rt.found[q] = p
	}
	rt.mu.Unlock()
	return p
}

// lookup is pattern, asking the muxes.
func (rt *router) lookup(r *http.Request) string {
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
