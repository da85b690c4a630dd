package custody

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/internal/lexical"
)

// CandidateText is a candidate CandidateTexts gives: its id, key and
// body, and Form, what a scorer derived from them before (nil if none:
// a store that keeps texts in memory keeps their forms with them). fn may
// set Form to the form it derives, for the store to keep.
//
// A Partial candidate is given with its Form alone, no key or body: the
// store keeps a record's form in place of its text once a scorer derived
// one. A scorer that cannot score that Form (another embedder's) sets it
// to nil, and is given the candidate again with its text.
//
// Its strings and Form may view memory the store keeps (the SQLite
// store's kept texts), which an erasure drops: anything that keeps one
// past the search copies it (as the facts memo and the built-in
// embedder's word cache do).
type CandidateText struct {
	ID, Key, Body string
	Form          embed.Form
	Partial       bool
}

// VectorStore is implemented by a store that keeps one vector per record
// for semantic search. Vectors are derived data: computed from a record's
// body (and key) after its write committed, stored with the id of the
// model that made them, and deleted with the body when it is erased (in
// the erasure's own transaction). A static embedder's (embed.Static: the
// built-in one) are never stored: its semantic list scores the texts
// CandidateTexts reads.
type VectorStore interface {
	// PutVectors stores the vectors of records (replacing any older one),
	// except for records erased meanwhile, which keep none.
	PutVectors(ctx context.Context, model string, vs []RecordVector) error
	// Unembedded lists, in id order after the id after, at most limit
	// records of any tenant and state that have a body and no vector of
	// model.
	Unembedded(ctx context.Context, model, after string, limit int) ([]RecordText, error)
	// VectorSearch ranks the records eligible for s (inside the query, as
	// Search) that pass q's filters by their vector of model, best first,
	// at most q.Limit of them, as embed.TermScorer scores them against
	// the query vectors terms (one: cosine similarity). The scan is
	// exact; when more than maxScan records are eligible (0: no bound)
	// it stops and answers ErrScanBound.
	VectorSearch(ctx context.Context, s Scope, q SearchQuery, model string, terms [][]float32, maxScan int) ([]Ranked, error)
	// VectorCandidates ranks as VectorSearch does, among candidates only:
	// the records eligible for s that pass q's filters (inside the
	// lexical index's query, before its LIMIT) and hold at least one of
	// the lexical terms match (internal/lexical) in body or key, at most
	// candidates of them, best BM25 first. Each query word's rarity is
	// counted as among all the store's records with a vector of model.
	VectorCandidates(ctx context.Context, s Scope, q SearchQuery, model string, terms [][]float32, match []string, candidates int) ([]Ranked, error)
	// CandidateTexts reads the texts of the candidates VectorCandidates
	// would rank, for an embedder that scores texts and stores no vectors
	// (embed.Static): the records eligible for s that pass q's filters
	// (inside the lexical index's query, before its LIMIT, and again in
	// the query reading the texts) and hold at least one of the lexical
	// terms match in body or key, at most candidates of them, best BM25
	// first. fn is given each one, in any order (and must not keep c,
	// which the store may give it again for the next), and the answer is
	// how many records s may retrieve: the corpus a query word's rarity
	// is counted over.
	CandidateTexts(ctx context.Context, s Scope, q SearchQuery, match []string, candidates int, fn func(c *CandidateText)) (corpus int, err error)
	// LexicalRanks is Search's ranking without the records: the ids and
	// scores of at most q.Limit records, best first. The ids may view
	// memory the store keeps, as CandidateText's strings may.
	LexicalRanks(ctx context.Context, s Scope, q SearchQuery) ([]Ranked, error)
	// RankedRecords reads the records of ids that are eligible for s and
	// pass q's filters (a record that ceased to be meanwhile is left
	// out), in any order.
	RankedRecords(ctx context.Context, s Scope, q SearchQuery, ids []string) ([]*Record, error)
	// DropVectors deletes every vector (custody reindex --embeddings).
	DropVectors(ctx context.Context) error
	// VectorOf is the model and dimension of a record's stored vector;
	// ErrNotFound when it has none.
	VectorOf(ctx context.Context, tenant, id string) (model string, dim int, err error)
}

// ErrScanBound is VectorSearch's answer when more records are eligible
// than it was allowed to scan.
var ErrScanBound = errors.New("more eligible records than an exact vector scan may read")

// Ranked is one record of a candidate list: its id and score (higher is
// better). The records of a fused list are read once it is cut to its
// limit (RankedRecords).
type Ranked struct {
	ID    string
	Score float64
}

// RecordVector is the vector of one record.
type RecordVector struct {
	Tenant, ID string
	Vec        []float32
}

// RecordText is what a record's vector is computed from.
type RecordText struct {
	Tenant, ID, Key, Body string
}

// EmbedText is the text of a record that its vector is computed from: its
// key (whose words count) and its body.
func EmbedText(key, body string) string {
	body = lexical.Values(body) // a JSON object's values, not its keys
	if key == "" {
		return body
	}
	return key + "\n" + body
}

// embedBatch is how many records the embedding worker embeds at once.
const embedBatch = 64

// vectorStore is the service's store as a VectorStore, with the service's
// embedder, or an error saying why semantic search is not available.
func (s *Service) vectorStore() (VectorStore, embed.Embedder, error) {
	if s.opts.Embedder == nil {
		return nil, nil, errors.New("no embedder is configured (serve --embedder)")
	}
	vs, ok := s.store.(VectorStore)
	if !ok {
		return nil, nil, errors.New("this store keeps no vectors")
	}
	return vs, s.opts.Embedder, nil
}

// storesVectors is whether records' vectors of e are stored: those of
// any embedder but a static one, which are computed from the records'
// texts when a search scores them.
func storesVectors(e embed.Embedder) bool {
	_, static := e.(embed.Static)
	return !static
}

// EmbedPending computes the vectors the store lacks for the configured
// embedder's model — records written while no worker ran, whose
// embedding failed, or whose vector is of another model — and returns how
// many it stored. For a static embedder nothing is pending: it stores no
// vectors.
func (s *Service) EmbedPending(ctx context.Context) (int, error) {
	vs, e, err := s.vectorStore()
	if err != nil {
		return 0, err
	}
	if !storesVectors(e) {
		return 0, nil
	}
	n, after := 0, ""
	for {
		recs, err := vs.Unembedded(ctx, e.Model(), after, embedBatch)
		if err != nil || len(recs) == 0 {
			return n, err
		}
		if err := s.embedRecords(ctx, vs, e, recs); err != nil {
			return n, err
		}
		n += len(recs)
		after = recs[len(recs)-1].ID
	}
}

func (s *Service) embedRecords(ctx context.Context, vs VectorStore, e embed.Embedder, recs []RecordText) error {
	texts := make([]string, len(recs))
	for i, r := range recs {
		texts[i] = EmbedText(r.Key, r.Body)
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embedding %d records: %w", len(recs), err)
	}
	if len(vecs) != len(recs) {
		return fmt.Errorf("embedding %d records: the embedder returned %d vectors", len(recs), len(vecs))
	}
	out := make([]RecordVector, len(recs))
	for i, r := range recs {
		out[i] = RecordVector{Tenant: r.Tenant, ID: r.ID, Vec: vecs[i]}
	}
	return vs.PutVectors(ctx, e.Model(), out)
}

// EmbedWorker computes the vectors of new records in the background, so
// that a write never waits for (or fails because of) the embedder: every
// admission decision, once committed, queues its record; the worker embeds
// the queue in batches. When the queue overflows or the embedder fails,
// it backs off and then catches up with EmbedPending, as it does when it
// starts (records written while no worker ran).
type EmbedWorker struct {
	s      *Service
	queue  chan RecordText
	wake   chan struct{}
	sweep  atomic.Bool
	cancel context.CancelFunc
	wg     sync.WaitGroup
	opts   EmbedWorkerOptions
}

// EmbedWorkerOptions are told what the worker does; zero fields are not.
type EmbedWorkerOptions struct {
	// OnError is told of each failure; the worker backs off and retries
	// on its own.
	OnError func(error)
	// OnStored is told how many vectors were stored, after each batch.
	OnStored func(n int)
}

// StartEmbedding starts the worker for the configured embedder; nil when
// there is none, it is static (nothing to store) or the store keeps no
// vectors.
func (s *Service) StartEmbedding(opts EmbedWorkerOptions) *EmbedWorker {
	if _, e, err := s.vectorStore(); err != nil || !storesVectors(e) {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &EmbedWorker{s: s, queue: make(chan RecordText, 4096), wake: make(chan struct{}, 1), cancel: cancel, opts: opts}
	w.sweep.Store(true)
	s.OnEvent(func(e Event) {
		if e.Kind != "admission" || e.Record == "" || ctx.Err() != nil {
			return
		}
		select {
		case w.queue <- RecordText{Tenant: e.Tenant, ID: e.Record}:
		default:
			w.sweep.Store(true) // full: catch up later
			w.signal()
		}
	})
	w.wg.Add(1)
	go func() { defer w.wg.Done(); w.run(ctx) }()
	return w
}

func (w *EmbedWorker) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Close stops the worker and waits for it.
func (w *EmbedWorker) Close() {
	if w == nil {
		return
	}
	w.cancel()
	w.wg.Wait()
}

const (
	embedLinger     = 50 * time.Millisecond
	embedBackoffMin = time.Second
	embedBackoffMax = time.Minute
)

func (w *EmbedWorker) run(ctx context.Context) {
	backoff := embedBackoffMin
	var first []RecordText
	for ctx.Err() == nil {
		var err error
		if w.sweep.Swap(false) {
			var n int
			n, err = w.s.EmbedPending(ctx)
			w.stored(n)
			first = nil // the sweep found it, if it needed a vector
		} else {
			err = w.drain(ctx, first)
			first = nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if w.opts.OnError != nil {
				w.opts.OnError(err)
			}
			w.sweep.Store(true)
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, embedBackoffMax)
			continue
		}
		backoff = embedBackoffMin
		if w.sweep.Load() {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case r := <-w.queue:
			first = w.linger(ctx, r)
		}
	}
}

// linger collects the records queued within embedLinger of the first, up
// to a batch: one write of vectors per batch of writes rather than one
// per write, so the worker takes little of the store's writer.
func (w *EmbedWorker) linger(ctx context.Context, first RecordText) []RecordText {
	batch := []RecordText{first}
	t := time.NewTimer(embedLinger)
	defer t.Stop()
	for len(batch) < embedBatch {
		select {
		case r := <-w.queue:
			batch = append(batch, r)
		case <-t.C:
			return batch
		case <-ctx.Done():
			return batch
		}
	}
	return batch
}

func (w *EmbedWorker) stored(n int) {
	if n > 0 && w.opts.OnStored != nil {
		w.opts.OnStored(n)
	}
}

// drain embeds what is queued, a batch at a time.
func (w *EmbedWorker) drain(ctx context.Context, first []RecordText) error {
	vs, e, err := w.s.vectorStore()
	if err != nil {
		return err
	}
	for {
		batch := first
		first = nil
	fill:
		for len(batch) < embedBatch {
			select {
			case r := <-w.queue:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		if len(batch) == 0 {
			return nil
		}
		recs, err := w.s.recordTexts(ctx, batch)
		if err == nil && len(recs) > 0 {
			err = w.s.embedRecords(ctx, vs, e, recs)
		}
		if err != nil {
			return err
		}
		w.stored(len(recs))
	}
}

// recordTexts reads the bodies of queued records, leaving out erased and
// empty ones.
func (s *Service) recordTexts(ctx context.Context, batch []RecordText) ([]RecordText, error) {
	var out []RecordText
	err := s.store.View(ctx, func(tx Tx) error {
		out = out[:0]
		for _, q := range batch {
			r, err := tx.Record(ctx, q.Tenant, q.ID)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if !r.Erased && r.Body != "" {
				out = append(out, RecordText{Tenant: r.Tenant, ID: r.ID, Key: r.Key, Body: r.Body})
			}
		}
		return nil
	})
	return out, err
}
