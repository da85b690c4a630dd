package poisonbench

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultDelays are the delays a run uses unless told otherwise. The full
// run adds 100.
var DefaultDelays = []int{0, 1, 10}

// MaxDelay bounds a delay, so a typo cannot start a run of days.
const MaxDelay = 1000

// Config configures a run. The zero value runs every family in every cell
// with the default delays, seed 0 and the scripted agent.
type Config struct {
	Seed   int64
	Delays []int
	// Families and Cells select by name; empty means all.
	Families []string
	Cells    []string
	// Dir holds the trial stores; empty means a temporary directory that is
	// removed afterwards.
	Dir string
	// Parallel is how many trials run at once; 0 means GOMAXPROCS.
	Parallel int
	// Brain drives the agent; nil means Scripted. AgentName labels it.
	Brain     Brain
	AgentName string
	// Timing keeps the cost per operation in the report. It is the one
	// result that is not deterministic.
	Timing bool

	// flipVendors swaps the vendors of every trial (for the tests that
	// check the results follow the roles, not the names).
	flipVendors bool
}

// Report is the outcome of a run.
type Report struct {
	Seed     int64         `json:"seed"`
	Delays   []int         `json:"delays"`
	Agent    string        `json:"agent"`
	Cells    []Cell        `json:"cells"`
	Families []*Family     `json:"families"`
	Rows     []Row         `json:"rows"`
	Trials   []TrialResult `json:"trials"`
	// Timing says whether the report carries the cost per operation.
	Timing bool `json:"timing"`
	// Elapsed is the wall time of the run (only with Timing).
	Elapsed time.Duration `json:"-"`
}

// Run plays every selected family in every selected cell after each delay,
// each trial on a fresh store.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	fams, cells, err := cfg.selection()
	if err != nil {
		return nil, err
	}
	delays := cfg.Delays
	if len(delays) == 0 {
		delays = DefaultDelays
	}
	for _, d := range delays {
		if d < 0 || d > MaxDelay {
			return nil, fmt.Errorf("poisonbench: delay %d is not between 0 and %d", d, MaxDelay)
		}
	}
	brain, agent := cfg.Brain, cfg.AgentName
	if brain == nil {
		brain, agent = Scripted{}, "scripted (always complies)"
	}
	dir := cfg.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "poisonbench-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	par := cfg.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	v := newValues(cfg.Seed)

	// One template per cell and attacked vendor: the victim's baseline
	// payee account is with the vendor the attack targets.
	templates := make([][2]*template, len(cells))
	err = parallel(ctx, par, 2*len(cells), func(ctx context.Context, i int) error {
		ci, o := i/2, i%2
		tv := v.with(orientations[o][0], orientations[o][1])
		d := filepath.Join(dir, "template-"+fileName(cells[ci].Name)+"-"+slug(tv.Target))
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		var err error
		templates[ci][o], err = buildTemplate(ctx, d, cells[ci], tv)
		if err != nil {
			return fmt.Errorf("poisonbench: preparing the %s store (attacks on %s): %w", cells[ci].Name, tv.Target, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	type job struct {
		fam   *Family
		cell  int
		delay int
	}
	var jobs []job
	for _, f := range fams {
		for ci := range cells {
			for _, d := range delays {
				jobs = append(jobs, job{f, ci, d})
			}
		}
	}
	results := make([]TrialResult, len(jobs))
	err = parallel(ctx, par, len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		cell := cells[j.cell]
		d := filepath.Join(dir, fmt.Sprintf("%s-%s-%d", j.fam.Name, fileName(cell.Name), j.delay))
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		defer os.RemoveAll(d)
		o := orientation(j.fam, cell, j.delay, cfg.Seed)
		if cfg.flipVendors {
			o = 1 - o
		}
		w, err := templates[j.cell][o].open(ctx, d, cell)
		if err != nil {
			return err
		}
		tv := v.with(orientations[o][0], orientations[o][1])
		t := &trial{ctx: ctx, fam: j.fam, cell: cell, delay: j.delay, v: tv, w: w, brain: brain,
			rng:    rand.New(rand.NewPCG(uint64(cfg.Seed), trialStream(j.fam.Name, j.delay))),
			agents: map[string]*Agent{}, poisoned: map[string]bool{},
			res: TrialResult{Family: j.fam.Name, Cell: cell.Name, Delay: j.delay, Target: tv.Target}}
		err = t.run()
		if cerr := w.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("poisonbench: %s in cell %s after %d sessions: %w", j.fam.Name, cell.Name, j.delay, err)
		}
		results[i] = t.res
		return nil
	})
	if err != nil {
		return nil, err
	}

	rep := &Report{Seed: cfg.Seed, Delays: delays, Agent: agent, Cells: cells, Families: fams, Timing: cfg.Timing}
	for i, f := range fams {
		for ci, c := range cells {
			first := (i*len(cells) + ci) * len(delays)
			rep.Rows = append(rep.Rows, aggregate(f.Name, c.Name, results[first:first+len(delays)]))
		}
	}
	for i := range results {
		if cfg.Timing && results[i].Ops > 0 {
			results[i].MicrosPerOp = float64(results[i].Spent.Microseconds()) / float64(results[i].Ops)
		}
	}
	if !cfg.Timing {
		for i := range rep.Rows {
			rep.Rows[i].MicrosPerOp = 0
		}
	}
	rep.Trials = results
	if cfg.Timing {
		rep.Elapsed = time.Since(start)
	}
	return rep, nil
}

func (cfg Config) selection() ([]*Family, []Cell, error) {
	fams := Families
	if len(cfg.Families) > 0 {
		fams = nil
		for _, n := range cfg.Families {
			f, err := FamilyNamed(n)
			if err != nil {
				return nil, nil, err
			}
			fams = append(fams, f)
		}
	}
	cells := Cells
	if len(cfg.Cells) > 0 {
		cells = nil
		for _, n := range cfg.Cells {
			c, err := CellNamed(n)
			if err != nil {
				return nil, nil, err
			}
			cells = append(cells, c)
		}
	}
	return fams, cells, nil
}

// orientations are the two ways a trial can run: the attacked vendor, then
// the twin's.
var orientations = [2][2]string{{acme, globex}, {globex, acme}}

// orientation says which way a trial runs (an index into orientations):
// the parity of the family's place in Families, the cell's in Cells, the
// delay and the seed. It depends on nothing a run selects, so a family
// gives the same trial alone or in the full matrix; over the cells, the
// families and the delays every family and every cell runs both ways, and
// the matrix of any seed splits in half (exactly, with an even number of
// families or cells; the delays 0, 1, 10 split two to one in a row).
func orientation(f *Family, c Cell, delay int, seed int64) int {
	fi := slices.Index(Families, f)
	ci := slices.IndexFunc(Cells, func(x Cell) bool { return x.Name == c.Name })
	return (fi + ci + delay + int(seed&1)) & 1
}

// trialStream makes the benign sessions of a family and delay the same in
// every cell and whatever else the run selects.
func trialStream(family string, delay int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", family, delay)
	return h.Sum64()
}

func fileName(s string) string { return strings.NewReplacer("+", "-", "/", "-").Replace(s) }

// parallel runs fn(0..n-1) on at most par goroutines and returns the first
// error; the others are cancelled through ctx.
func parallel(ctx context.Context, par, n int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for range min(par, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
