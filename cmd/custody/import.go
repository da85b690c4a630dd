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
	"regexp"
	"sort"
	"strconv"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
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
	tenant := fs.String("tenant", "", "with --db or --postgres: the `tenant` of the principal that writes")
	principal := fs.String("principal", "", "with --db or --postgres: the `name` of the principal that writes")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody import --in FILE.jsonl [--subject USER]                      (to the server at $CUSTODY_URL)\n"+
			"       custody import --in FILE.jsonl --db FILE --tenant T --principal NAME [--subject USER]\n\n"+
			"Submits candidates from a JSON Lines file, each line a POST /v1/memories body such as\n"+
			"  {\"namespace\":\"profile\",\"class\":\"fact\",\"body\":\"...\",\"channel\":\"user\"}\n"+
			"in batches of up to %d (POST /v1/memories/batch with $CUSTODY_TOKEN, or straight into the store\n"+
			"with --db or --postgres, as the principal named). Each candidate is decided on its own; a batch\n"+
			"with a bad line is refused whole and the import stops there, naming the line. At the end it\n"+
			"prints how many candidates went to each state.\n\n", custody.MaxBatch)
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
	items = items[*skip:]

	var submit func(ctx context.Context, batch []httpapi.MemoryRequest) ([]*custody.Decision, error)
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
		submit = func(ctx context.Context, batch []httpapi.MemoryRequest) ([]*custody.Decision, error) {
			return c.Batch(ctx, httpapi.BatchRequest{Subject: cf.subject, Items: batch})
		}
	}

	states := map[custody.State]int{}
	p := newProgress(stderr, "importing")
	done := 0
	for done < len(items) {
		n := batchLen(items[done:])
		batch := make([]httpapi.MemoryRequest, n)
		for i, it := range items[done : done+n] {
			batch[i] = it.req
		}
		ds, err := submit(ctx, batch)
		if err != nil {
			p.done()
			return importError(err, items[done:done+n], *skip+done, states)
		}
		for _, d := range ds {
			states[d.State]++
		}
		done += n
		p.update(uint64(done), uint64(len(items)))
	}
	p.done()
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

// batchLen is how many of items go in the next batch: at most
// custody.MaxBatch, and at most importBatchBytes of text (at least one).
func batchLen(items []importItem) int {
	n, size := 0, 0
	for n < len(items) && n < custody.MaxBatch && (n == 0 || size+items[n].size <= importBatchBytes) {
		size += items[n].size
		n++
	}
	return n
}

// storeSubmitter submits batches straight into the store, as the principal
// tenant/name acting for subject.
func storeSubmitter(ctx context.Context, svc *custody.Service, tenant, name, subject string) (func(context.Context, []httpapi.MemoryRequest) ([]*custody.Decision, error), error) {
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
	return func(ctx context.Context, batch []httpapi.MemoryRequest) ([]*custody.Decision, error) {
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
		return svc.RememberBatch(ctx, c, cands)
	}, nil
}

var itemFieldRE = regexp.MustCompile(`^items\[(\d+)\]`)

// importError says where an import stopped: the line of the refused
// candidate when the error names one, what was imported before, and how
// to go on.
func importError(err error, batch []importItem, before int, states map[custody.State]int) error {
	field, msg := "", err.Error()
	var ce *client.Error
	var de *custody.Error
	switch {
	case errors.As(err, &ce):
		field, msg = ce.Field, ce.Message
	case errors.As(err, &de):
		field, msg = de.Field, de.Msg
	}
	where := fmt.Sprintf("the batch of lines %d to %d", batch[0].line, batch[len(batch)-1].line)
	if m := itemFieldRE.FindStringSubmatch(field); m != nil {
		if i, _ := strconv.Atoi(m[1]); i < len(batch) {
			where = fmt.Sprintf("line %d", batch[i].line)
			msg = strings.TrimPrefix(strings.TrimPrefix(msg, field+": "), m[0]+": ")
		}
	}
	imported := "nothing was imported"
	if before > 0 {
		imported = fmt.Sprintf("the %d candidates before its batch are in the store (this run: %s); mend the line and run again with --skip %d", before, stateSummary(states), before)
	}
	return fmt.Errorf("%s was refused, with its whole batch: %s\n%s", where, msg, imported)
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
