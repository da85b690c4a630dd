package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/internal/bulk"
)

// importBatchBytes bounds the candidates' text in one batch, well under the
// server's httpapi.DefaultMaxBatchBytes.
const importBatchBytes = 8 << 20

// maxImportLine bounds one line of the input.
const maxImportLine = 4 << 20

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := registerClientFlags(fs)
	var sf storeFlags
	sf.register(fs)
	sf.registerPolicy(fs)
	in := fs.String("in", "", "JSON Lines `file` of candidates, one POST /v1/memories body a line (\"-\" for stdin)")
	skip := fs.Int("skip", 0, "skip the first `n` candidates (to go on after an import stopped at a bad line)")
	count := fs.Int("count", 0, "import only the `n` candidates after those skipped (0: all of them)")
	parallel := fs.Int("parallel", bulk.DefaultParallel, "keep `n` batches in flight: one is decided while the one before is written (1: one at a time)")
	tenant := fs.String("tenant", "", "with --db or --postgres: the `tenant` of the principal that writes")
	principal := fs.String("principal", "", "with --db or --postgres: the `name` of the principal that writes")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody import --in FILE.jsonl [--subject USER]                      (to the server at $CUSTODY_URL)\n"+
			"       custody import --in FILE.jsonl --db FILE --tenant T --principal NAME [--subject USER]\n\n"+
			"Submits candidates from a JSON Lines file, each line a POST /v1/memories body such as\n"+
			"  {\"namespace\":\"profile\",\"class\":\"fact\",\"body\":\"...\",\"channel\":\"user\"}\n"+
			"in batches of up to %d (POST /v1/memories/batch with $CUSTODY_TOKEN, or straight into the store\n"+
			"with --db or --postgres, as the principal named), --parallel of them in flight at once: the\n"+
			"candidates of one batch are decided while the one before is written. Each candidate is decided on\n"+
			"its own; a batch with a bad line is refused whole and the import stops there, naming the line:\n"+
			"no batch is sent after it. A batch sent before the refusal was known (with --parallel 2, the one\n"+
			"right after it) is still answered and may be written; the error then names its lines and the\n"+
			"--skip and --count that import what is missing. Batches that share a key are never in flight\n"+
			"together, so a key's versions are decided in the order of the file. At the end it prints how\n"+
			"many candidates went to each state.\n\n", custody.MaxBatch)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *in == "" {
		return usageError{"--in is required: the JSON Lines file to import"}
	}
	if *skip < 0 {
		return usageError{"--skip must not be negative"}
	}
	if *count < 0 {
		return usageError{"--count must not be negative (0 imports every candidate after --skip)"}
	}
	if *parallel < 1 {
		return usageError{"--parallel must be at least 1 (1 sends each batch after the answer to the one before)"}
	}
	offline, err := storeOrServer(fs)
	if err != nil {
		return err
	}
	switch {
	case offline && (*tenant == "" || *principal == ""):
		return usageError{"with --db or --postgres, --tenant and --principal name who writes"}
	case !offline && (*tenant != "" || *principal != ""):
		return usageError{"--tenant and --principal are for --db or --postgres; a server knows the writer from $CUSTODY_TOKEN"}
	}
	items, err := readCandidates(*in)
	if err != nil {
		return err
	}
	if *skip > len(items) {
		return usageError{fmt.Sprintf("--skip %d is more than the %d candidates of %s", *skip, len(items), *in)}
	}
	total := len(items)
	items = items[*skip:]
	if *count > 0 && *count < len(items) {
		items = items[:*count]
	}

	// submit sends one batch and returns the states of its candidates.
	var submit func(ctx context.Context, batch []httpapi.MemoryRequest) ([]custody.State, error)
	if offline {
		svc, st, err := sf.open(ctx, stderr)
		if err != nil {
			return err
		}
		defer st.Close()
		if submit, err = storeSubmitter(ctx, svc, *tenant, *principal, cf.subject); err != nil {
			return err
		}
	} else {
		c, err := cf.client()
		if err != nil {
			return err
		}
		submit = func(ctx context.Context, batch []httpapi.MemoryRequest) ([]custody.State, error) {
			return c.BatchStates(ctx, httpapi.BatchRequest{Subject: cf.subject, Items: batch})
		}
	}

	batches := splitBatches(items)
	decided := make([][]custody.State, len(batches))
	states := map[custody.State]int{}
	p := newProgress(stderr, "importing")
	done := 0
	outcomes, errs := bulk.Send(ctx, len(batches), *parallel, keyOrder(batches), func(ctx context.Context, i int) error {
		reqs := make([]httpapi.MemoryRequest, len(batches[i].items))
		for j, it := range batches[i].items {
			reqs[j] = it.req
		}
		var err error
		decided[i], err = submit(ctx, reqs)
		return err
	}, func(i int, err error) {
		if err != nil {
			return
		}
		for _, st := range decided[i] {
			states[st]++
		}
		done += len(batches[i].items)
		p.update(uint64(done), uint64(len(items)))
	})
	p.done()
	if k := slices.Index(outcomes, bulk.Refused); k >= 0 {
		return importError(errs[k], stop{batches: batches, outcomes: outcomes, refused: k, skip: *skip, total: total}, states)
	}
	if cf.json {
		return printJSON(stdout, states)
	}
	fmt.Fprintf(stdout, "imported %d candidates: %s\n", len(items), stateSummary(states))
	return nil
}

// importItem is one candidate of the input and the line it is on.
type importItem struct {
	line int
	size int
	req  httpapi.MemoryRequest
}

// readCandidates reads the whole input, strictly, before anything is
// submitted: a line that is not a candidate stops the import before its
// first batch.
func readCandidates(path string) ([]importItem, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxImportLine)
	var items []importItem
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var req httpapi.MemoryRequest
		if err := dec.Decode(&req); err != nil {
			return nil, fmt.Errorf("%s line %d: %v; each line must be one POST /v1/memories body (see custody import -h)", path, line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s line %d: more than one JSON value; put one candidate on each line", path, line)
		}
		items = append(items, importItem{line: line, size: len(b), req: req})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w (a line may be at most %d bytes)", path, err, maxImportLine)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s holds no candidates", path)
	}
	return items, nil
}

// importBatch is the candidates of one batch and where it starts among
// the candidates imported.
type importBatch struct {
	start int
	items []importItem
}

// splitBatches cuts items into batches of at most custody.MaxBatch
// candidates and at most importBatchBytes of text (at least one).
func splitBatches(items []importItem) []importBatch {
	var out []importBatch
	for start := 0; start < len(items); {
		n, size := 0, 0
		for rest := items[start:]; n < len(rest) && n < custody.MaxBatch && (n == 0 || size+rest[n].size <= importBatchBytes); n++ {
			size += rest[n].size
		}
		out = append(out, importBatch{start: start, items: items[start : start+n]})
		start += n
	}
	return out
}

// keyOrder is bulk.Send's after for batches: a batch holding a key that a
// batch before it holds too follows that one, so that the key's versions
// are decided in the order of the file.
func keyOrder(batches []importBatch) func(int) int {
	after := make([]int, len(batches))
	last := map[[2]string]int{}
	for i, b := range batches {
		after[i] = -1
		for _, it := range b.items {
			if it.req.Key == "" {
				continue
			}
			k := [2]string{it.req.Namespace, it.req.Key}
			if j, ok := last[k]; ok && j < i {
				after[i] = max(after[i], j)
			}
			last[k] = i
		}
	}
	return func(i int) int { return after[i] }
}

// storeSubmitter submits batches straight into the store, as the principal
// tenant/name acting for subject.
func storeSubmitter(ctx context.Context, svc *custody.Service, tenant, name, subject string) (func(context.Context, []httpapi.MemoryRequest) ([]custody.State, error), error) {
	var p *custody.Principal
	err := svc.Store().View(ctx, func(tx custody.Tx) (err error) {
		p, err = tx.Principal(ctx, tenant, name)
		return err
	})
	if errors.Is(err, custody.ErrNotFound) {
		return nil, fmt.Errorf("no principal %s/%s in the store: create it with custody principal add --tenant %s --name %s --role user", tenant, name, tenant, name)
	}
	if err != nil {
		return nil, err
	}
	c, err := svc.Act(ctx, p, subject)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, batch []httpapi.MemoryRequest) ([]custody.State, error) {
		cands := make([]custody.Candidate, len(batch))
		for i, req := range batch {
			if req.Subject != "" && req.Subject != subject {
				return nil, custody.ItemError(i, &custody.Error{Kind: custody.ErrInvalid, Field: "subject",
					Msg: "a line may not name another subject than --subject; import each subject's lines apart"})
			}
			cand, err := httpapi.Candidate(req)
			if err != nil {
				return nil, custody.ItemError(i, err)
			}
			cands[i] = cand
		}
		ds, err := svc.RememberBatch(ctx, c, cands)
		if err != nil {
			return nil, err
		}
		states := make([]custody.State, len(ds))
		for i, d := range ds {
			states[i] = d.State
		}
		return states, nil
	}, nil
}

// stateSummary is "5 admitted, 2 quarantined": the states by count, most
// first.
func stateSummary(states map[custody.State]int) string {
	keys := make([]custody.State, 0, len(states))
	for s := range states {
		keys = append(keys, s)
	}
	sort.Slice(keys, func(i, j int) bool {
		if states[keys[i]] != states[keys[j]] {
			return states[keys[i]] > states[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, s := range keys {
		parts[i] = fmt.Sprintf("%d %s", states[s], s)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
