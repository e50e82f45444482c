package main

// The soak (-soak, `make soak`): one builtin `assistant serve` under
// varied requests for a long time, for its memory rather than its speed.
//
// Every request is drawn at random (soakInputs), so that no memo of the
// service answers it: chat turns in business wording assembled from word
// lists, with a number that makes each message new, a random mode and
// vertical and 0 to 4 earlier turns of random history; resolves of 1 to 30
// tokens of the corpus in random order with 0 to 3 unknown ones; searches
// of 2 to 10 words of the same lists; previews of the chat's wording. The
// four kinds take turns in phases of -soak-phase (5 s), each with
// -soak-conns connections (2), so that each kind's CPU time and
// allocations can be read from the process's own counters over its phases;
// the memory is the sum of all of them, sampled throughout. With
// -soak-mixed the four run at once, each with -soak-conns connections, as
// a service meets them: the memory is then that of the busier service,
// and CPU time and allocations are reported over all requests only.
//
// Reported: resident memory (VmRSS from /proc, every second: start, peak,
// end, and one figure a minute), the live heap (runtime.MemStats.HeapAlloc
// just after a collection the soak asks for once per round of the four
// kinds: peak and end), the heap's peak (HeapAlloc after every phase), the
// garbage collections (the soak's own left out), and per kind the requests, errors,
// latency, server CPU time and bytes allocated per request (the growth of
// runtime.MemStats.TotalAlloc over the kind's phases, over its requests).
// With -soak-memlimit the service runs with that GOMEMLIMIT; with -profile
// DIR the service's allocation profile is written to DIR/soak.allocs.pprof
// at the end.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// soakKind is one kind of request of the soak.
type soakKind struct {
	name   string
	target func(in *soakInputs, base, key string) target
}

var soakKinds = []soakKind{
	{"chat", func(in *soakInputs, base, key string) target {
		t := post("/api/v1/chat", nil, true)(base, key)
		t.vary = func() (string, []byte) { return t.url, in.chat() }
		return t
	}},
	{"resolve", func(in *soakInputs, base, key string) target {
		t := post(pub+"/resolve", nil, false)(base, key)
		t.vary = func() (string, []byte) { return t.url, in.resolve() }
		return t
	}},
	{"search", func(in *soakInputs, base, key string) target {
		t := get("")(base, key)
		t.vary = func() (string, []byte) { return base + in.search(), nil }
		return t
	}},
	{"preview", func(in *soakInputs, base, key string) target {
		t := post(pub+"/preview", nil, false)(base, key)
		t.vary = func() (string, []byte) { return t.url, in.preview() }
		return t
	}},
}

// soakKindResult is what the soak measured of one kind over its phases.
type soakKindResult struct {
	Name              string  `json:"name"`
	Requests          int     `json:"requests"`
	Errors            int     `json:"errors"`
	FirstError        string  `json:"first_error,omitempty"`
	RPS               float64 `json:"rps"`
	P50Ms             float64 `json:"p50_ms"`
	P99Ms             float64 `json:"p99_ms"`
	ServerCPUMsPerReq float64 `json:"server_cpu_ms_per_req"`
	AllocKBPerReq     float64 `json:"alloc_kb_per_req"`

	samples []time.Duration
	elapsed time.Duration
	cpu     time.Duration
	alloc   uint64
}

// soakReport is the soak's JSON result.
type soakReport struct {
	Date       string           `json:"date"`
	Commit     string           `json:"commit"`
	Duration   string           `json:"duration"`
	Phase      string           `json:"phase"`
	Conns      int              `json:"conns"`
	MemLimit   string           `json:"gomemlimit,omitempty"`
	Kinds      []soakKindResult `json:"kinds"`
	RSSStartMB float64          `json:"rss_start_mib"`
	RSSPeakMB  float64          `json:"rss_peak_mib"`
	RSSEndMB   float64          `json:"rss_end_mib"`
	RSSByMin   []float64        `json:"rss_by_minute_mib"`
	LivePeakMB float64          `json:"live_heap_peak_mib"`
	LiveEndMB  float64          `json:"live_heap_end_mib"`
	HeapPeakMB float64          `json:"heap_alloc_peak_mib"`
	GCs        uint64           `json:"gc_count"`
	AllocMB    float64          `json:"allocated_mib"`
	Alive      bool             `json:"alive_at_end"`
	Mixed      bool             `json:"mixed"`
	// CPUMsPerReq and AllocKBPerReq are over every request of the soak.
	CPUMsPerReq   float64 `json:"server_cpu_ms_per_req"`
	AllocKBPerReq float64 `json:"alloc_kb_per_req"`
}

func runSoak(ctx context.Context, o options) error {
	if o.duration <= 0 || o.soakPhase <= 0 || o.soakConns < 1 {
		return errors.New("-duration, -soak-phase and -soak-conns must be positive")
	}
	root, tmp, bin, err := prepare(ctx, &o, "soak.json")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	inputs, err := newSoakInputs(root, 26)
	if err != nil {
		return err
	}
	profileAddr, err := freeAddr()
	if err != nil {
		return err
	}
	extra := map[string]string{"ASSISTANT_PROFILE_ADDR": profileAddr}
	if o.soakMemLimit != "" {
		extra["GOMEMLIMIT"] = o.soakMemLimit
	}
	p, key, err := startService(ctx, "assistant serve (builtin)", bin, filepath.Join(tmp, "soak"), 0, extra)
	if err != nil {
		return err
	}
	defer p.stop()
	pid := p.cmd.Process.Pid
	rep := soakReport{Date: time.Now().Format(time.RFC3339), Commit: gitDescribe(root), Duration: o.duration.String(),
		Phase: o.soakPhase.String(), Conns: o.soakConns, MemLimit: o.soakMemLimit, Mixed: o.soakMixed}
	forcedGCs := uint64(0)
	// stats reads the service's figures; with collect, it notes the heap
	// first (for its peak), then asks for a collection and reads again.
	stats := func(collect bool) (memStats, error) {
		if collect {
			before, err := readMemStats(ctx, "http://"+profileAddr, false)
			if err != nil {
				return before, err
			}
			rep.HeapPeakMB = max(rep.HeapPeakMB, mib(before.heapAlloc))
			forcedGCs++
		}
		return readMemStats(ctx, "http://"+profileAddr, collect)
	}

	first, err := stats(false)
	if err != nil {
		return err
	}
	rep.RSSStartMB = mib(rssBytes(pid))

	// Resident memory, every second, until the soak ends.
	var rssMu sync.Mutex
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-stopSampling:
				return
			case now := <-tick.C:
				rss := mib(rssBytes(pid))
				rssMu.Lock()
				rep.RSSPeakMB = max(rep.RSSPeakMB, rss)
				if m := int(now.Sub(start) / time.Minute); m >= len(rep.RSSByMin) {
					rep.RSSByMin = append(rep.RSSByMin, rss)
				}
				rssMu.Unlock()
			}
		}
	}()

	kinds := make([]soakKindResult, len(soakKinds))
	clients := make([]*http.Client, len(soakKinds))
	for i, k := range soakKinds {
		kinds[i].Name = k.name
		clients[i] = newClient(o.soakConns)
	}
	how := "in turn, %s each"
	if o.soakMixed {
		how = "all at once, measured every %s"
	}
	fmt.Fprintf(os.Stderr, "soak for %s: chat, resolve, search and preview "+how+", %d connections each\n", o.duration, o.soakPhase, o.soakConns)
	deadline := time.Now().Add(o.duration)
	last := first
	var allCPU time.Duration
	var allAlloc uint64
	for phase := 0; time.Now().Before(deadline) && ctx.Err() == nil; phase++ {
		// In turn, one kind a phase; with -soak-mixed, all of them at once.
		run := []int{phase % len(soakKinds)}
		endOfRound := run[0] == len(soakKinds)-1
		if o.soakMixed {
			run, endOfRound = []int{0, 1, 2, 3}, true
		}
		dur := min(o.soakPhase, time.Until(deadline))
		before, beforeOK := sampleCPU(serverProbes(pid)[:1])
		ms := make([]measurement, len(run))
		var wg sync.WaitGroup
		for n, i := range run {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ms[n] = load(ctx, []endpoint{{clients[i], soakKinds[i].target(inputs, p.url, key)}}, o.soakConns, 0, dur, nil)
			}()
		}
		wg.Wait()
		after, afterOK := sampleCPU(serverProbes(pid)[:1])
		if !beforeOK || !afterOK {
			return fmt.Errorf("the service's CPU time cannot be read: has it stopped? %s", p.log.String())
		}
		cpu := cpuSince(before, after)[probeServer]
		endOfRound = endOfRound || !time.Now().Before(deadline)
		now, err := stats(endOfRound)
		if err != nil {
			return fmt.Errorf("after %d phases: %w (the service: %s)", phase+1, err, p.log.String())
		}
		alloc := now.totalAlloc - last.totalAlloc
		allCPU, allAlloc = allCPU+cpu, allAlloc+alloc
		for n, i := range run {
			k, m := &kinds[i], ms[n]
			k.samples = append(k.samples, m.samples...)
			k.elapsed += m.elapsed
			if !o.soakMixed { // a kind's own phase: the process's figures are its
				k.cpu += cpu
				k.alloc += alloc
			}
			k.Errors += m.non2xx + m.transportErrors
			if k.FirstError == "" {
				k.FirstError = m.firstError
			}
		}
		last = now
		if endOfRound {
			rep.LiveEndMB = mib(now.heapAlloc)
			rep.LivePeakMB = max(rep.LivePeakMB, rep.LiveEndMB)
			fmt.Fprintf(os.Stderr, "  %s left: resident %.0f MiB, live heap %.0f MiB, %d GCs\n",
				max(time.Until(deadline), 0).Round(time.Second), mib(rssBytes(pid)), rep.LiveEndMB, now.numGC-first.numGC-forcedGCs)
		} else {
			rep.HeapPeakMB = max(rep.HeapPeakMB, mib(now.heapAlloc))
		}
	}
	close(stopSampling)
	<-sampled
	if o.profile != "" {
		// Everything the service allocated since it started (read with
		// go tool pprof -sample_index=alloc_space).
		if err := saveProfile(ctx, "http://"+profileAddr+"/debug/pprof/allocs", filepath.Join(o.profile, "soak.allocs.pprof")); err != nil {
			return err
		}
	}
	rep.RSSEndMB = mib(rssBytes(pid))
	rep.GCs, rep.AllocMB = last.numGC-first.numGC-forcedGCs, mib(last.totalAlloc-first.totalAlloc)
	_, err = stats(false)
	rep.Alive = err == nil && p.cmd.ProcessState == nil
	for i := range kinds {
		k := &kinds[i]
		k.Requests = len(k.samples)
		if k.Requests > 0 {
			k.RPS = round(float64(k.Requests)/k.elapsed.Seconds(), 1)
			k.ServerCPUMsPerReq = round(ms(k.cpu)/float64(k.Requests), 4)
			k.AllocKBPerReq = round(float64(k.alloc)/1024/float64(k.Requests), 1)
		}
		k.P50Ms, k.P99Ms = ms(percentile(k.samples, 50)), ms(percentile(k.samples, 99))
	}
	rep.Kinds = kinds
	if total := sumRequests(kinds); total > 0 {
		rep.CPUMsPerReq = round(ms(allCPU)/float64(total), 4)
		rep.AllocKBPerReq = round(float64(allAlloc)/1024/float64(total), 1)
	}
	printSoak(os.Stdout, rep)
	if o.out != "-" {
		if err := writeJSON(o.out, rep); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", o.out)
	}
	return nil
}

func printSoak(w io.Writer, r soakReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\trequests\terrors\treq/s\tp50 ms\tp99 ms\tserver CPU ms/req\tallocated KB/req\t")
	for _, k := range r.Kinds {
		cpu, alloc := fmt.Sprintf("%.3f", k.ServerCPUMsPerReq), fmt.Sprintf("%.1f", k.AllocKBPerReq)
		if r.Mixed {
			cpu, alloc = "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.2f\t%.2f\t%s\t%s\t\n", k.Name, k.Requests, k.Errors, k.RPS, k.P50Ms, k.P99Ms, cpu, alloc)
	}
	fmt.Fprintf(tw, "all\t%d\t%d\t\t\t\t%.3f\t%.1f\t\n", sumRequests(r.Kinds), sumErrors(r.Kinds), r.CPUMsPerReq, r.AllocKBPerReq)
	tw.Flush()
	if r.Mixed {
		fmt.Fprintln(w, "(all at once: CPU time and allocations are the service's, over every request)")
	}
	fmt.Fprintf(w, "resident MiB: start %.0f, peak %.0f, end %.0f; by minute %v\n", r.RSSStartMB, r.RSSPeakMB, r.RSSEndMB, r.RSSByMin)
	fmt.Fprintf(w, "live heap MiB: peak %.0f, end %.0f; HeapAlloc peak %.0f MiB; %d GCs; %.0f MiB allocated; alive at the end: %v\n",
		r.LivePeakMB, r.LiveEndMB, r.HeapPeakMB, r.GCs, r.AllocMB, r.Alive)
}

func sumRequests(kinds []soakKindResult) (n int) {
	for _, k := range kinds {
		n += k.Requests
	}
	return n
}

func sumErrors(kinds []soakKindResult) (n int) {
	for _, k := range kinds {
		n += k.Errors
	}
	return n
}

func mib(b uint64) float64 { return round(float64(b)/(1<<20), 1) }

// rssBytes is the resident memory of process pid (VmRSS), 0 when unknown.
func rssBytes(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// memStats are the service's runtime.MemStats figures the soak reads.
type memStats struct {
	heapAlloc  uint64
	totalAlloc uint64
	numGC      uint64
}

var memStatLine = regexp.MustCompile(`(?m)^# (HeapAlloc|TotalAlloc|NumGC) = (\d+)$`)

// readMemStats reads runtime.MemStats from the heap profile in its text
// form (debug=1) from the service's profiling listener; with collect, the
// service collects garbage first (gc=1).
func readMemStats(ctx context.Context, base string, collect bool) (memStats, error) {
	u := base + "/debug/pprof/heap?debug=1"
	if collect {
		u += "&gc=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return memStats{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return memStats{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return memStats{}, err
	}
	var s memStats
	found := memStatLine.FindAllSubmatch(body, -1)
	if len(found) < 3 {
		return s, fmt.Errorf("no runtime.MemStats in the heap profile: %.100q", body)
	}
	for _, f := range found {
		v, _ := strconv.ParseUint(string(f[2]), 10, 64)
		switch string(f[1]) {
		case "HeapAlloc":
			s.heapAlloc = v
		case "TotalAlloc":
			s.totalAlloc = v
		case "NumGC":
			s.numGC = v
		}
	}
	return s, nil
}

// soakInputs draws the soak's requests; safe for concurrent use.
type soakInputs struct {
	mu     sync.Mutex
	rng    *rand.Rand
	n      int
	tokens []string // type:slug of every entity of the embedded corpus
}

// Word lists of the soak's wording.
var (
	soakSubjects = []string{"our packing station", "the support queue", "our sales team", "the onboarding flow", "our checkout",
		"the warehouse", "our designers", "the front desk", "our trial users", "the finance team", "our biggest customer",
		"the night shift", "our returns desk", "the product team", "the founders", "our kitchen", "the dispatch team", "our clinic"}
	soakProblems = []string{"cannot keep up", "ships late", "loses half the leads", "keeps churning after the first month",
		"misses every deadline", "has too much work in progress", "gets the same complaints every week",
		"burns cash faster than planned", "cannot hire fast enough", "waits on one person for every decision",
		"discounts too often", "reworks most orders", "has no idea which channel works", "is stuck at the same revenue"}
	soakContexts = []string{"since we doubled prices", "in December", "after we hired two people", "every Monday",
		"since the last release", "when a big order comes in", "with only three staff", "even though demand is up",
		"after the migration", "during the launch", "now that we sell abroad", ""}
	soakAsks = []string{"What should we do first?", "How do we fix this?", "Where do we start?", "What should we measure?",
		"Is this a pricing problem?", "How do we find the bottleneck?", "Which framework fits?", ""}
	soakModes     = []string{"operator", "customer", "support", "success"}
	soakVerticals = []string{"saas", "ecommerce", "agency", "marketplace", "professional-services", "manufacturing",
		"healthcare", "hospitality", "retail", "logistics", "fintech", "education", "construction"}
)

// newSoakInputs reads the corpus's tokens from the repository at root.
func newSoakInputs(root string, seed uint64) (*soakInputs, error) {
	in := &soakInputs{rng: rand.New(rand.NewPCG(seed, seed))}
	files, err := filepath.Glob(filepath.Join(root, "internal", "knowledge", "corpus", "*", "*.md"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no corpus under %s: %v", root, err)
	}
	for _, f := range files {
		in.tokens = append(in.tokens, filepath.Base(filepath.Dir(f))+":"+strings.TrimSuffix(filepath.Base(f), ".md"))
	}
	return in, nil
}

func (in *soakInputs) pick(list []string) string { return list[in.rng.IntN(len(list))] }

// message is one question, new each time (its number).
func (in *soakInputs) message() string {
	in.n++
	parts := []string{in.pick(soakSubjects), in.pick(soakProblems), in.pick(soakContexts)}
	msg := strings.Join(parts, " ")
	msg = strings.ToUpper(msg[:1]) + strings.Join(strings.Fields(msg[1:]), " ")
	return fmt.Sprintf("%s (we are %d people). %s", msg, 2+in.n%997, in.pick(soakAsks))
}

func (in *soakInputs) chat() []byte {
	in.mu.Lock()
	defer in.mu.Unlock()
	type item struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	body := struct {
		Message  string `json:"message"`
		Mode     string `json:"mode"`
		Vertical string `json:"vertical,omitempty"`
		History  []item `json:"history,omitempty"`
	}{Message: in.message(), Mode: in.pick(soakModes)}
	if in.rng.IntN(4) > 0 {
		body.Vertical = in.pick(soakVerticals)
	}
	for range in.rng.IntN(5) {
		body.History = append(body.History, item{"user", in.message()},
			item{"assistant", "Start with " + in.pick(soakSubjects) + ": it " + in.pick(soakProblems) + "."})
	}
	b, _ := json.Marshal(body)
	return b
}

func (in *soakInputs) resolve() []byte {
	in.mu.Lock()
	defer in.mu.Unlock()
	type tok struct {
		Type string `json:"type"`
		Slug string `json:"slug"`
	}
	var body struct {
		Tokens []tok `json:"tokens"`
	}
	for range 1 + in.rng.IntN(30) {
		typ, slug, _ := strings.Cut(in.pick(in.tokens), ":")
		body.Tokens = append(body.Tokens, tok{typ, slug})
	}
	for range in.rng.IntN(4) {
		body.Tokens = append(body.Tokens, tok{"paper", fmt.Sprintf("missing-%d", in.rng.IntN(1_000_000))})
	}
	b, _ := json.Marshal(body)
	return b
}

func (in *soakInputs) search() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	words := strings.Fields(in.pick(soakSubjects) + " " + in.pick(soakProblems) + " " + in.pick(soakContexts))
	in.rng.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
	words = words[:min(len(words), 2+in.rng.IntN(9))]
	return fmt.Sprintf("%s/search?limit=%d&q=%s", pub, 5+in.rng.IntN(16), url.QueryEscape(strings.Join(words, " ")))
}

func (in *soakInputs) preview() []byte {
	in.mu.Lock()
	defer in.mu.Unlock()
	b, _ := json.Marshal(map[string]string{"vertical": in.pick(soakVerticals), "free_text": in.message()})
	return b
}

// saveProfile writes the profile at url to path.
func saveProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
