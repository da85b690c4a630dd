package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"math"

	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/internal/postings"
)

// buildSearchIndex builds the copy from the live records, in records_fts
// or pending, in one read snapshot, with the generation it holds.
func (s *Store) buildSearchIndex(ctx context.Context) {
	x, at, err := s.readSearchIndex(ctx)
	if err != nil {
		if ctx.Err() == nil {
			slog.Warn("search: could not build the in-memory index; ranking with FTS5 until the next search tries again", "err", err)
		}
		x = nil
	}
	s.search.finishBuild(x, at)
}

func (s *Store) readSearchIndex(ctx context.Context) (*postings.Index, searchPos, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, searchPos{}, err
	}
	defer tx.Rollback()
	at, err := readSearchPos(ctx, tx)
	if err != nil {
		return nil, at, err
	}
	if afterSearchSnapshot != nil {
		afterSearchSnapshot()
	}
	// Three stages, each on its goroutine: the rows read, their terms
	// found, and the postings added (in the order of the rows, which keeps
	// each term's list appended to at its end).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	read, found := make(chan []buildRow, 2), make(chan []buildRow, 2)
	errc := make(chan error, 1)
	go func() {
		defer close(read)
		errc <- scanBuildRows(ctx, tx, read)
	}()
	go func() {
		defer close(found)
		for rows := range read {
			for i := range rows {
				r := &rows[i]
				r.bodyTerms, r.keyTerms = lexical.Document(r.body), lexical.Document(r.key)
				r.body, r.key = "", ""
			}
			select {
			case found <- rows:
			case <-ctx.Done():
				return
			}
		}
	}()
	x := postings.New()
	for rows := range found {
		for _, r := range rows {
			if r.rid > math.MaxUint32 {
				s.search.mu.Lock()
				s.search.over = true
				s.search.mu.Unlock()
				slog.Warn("search: the in-memory index holds rows up to 2³²; ranking with FTS5", "row", r.rid)
				return nil, at, nil
			}
			x.Add(uint32(r.rid), r.at, r.bodyTerms, r.keyTerms)
		}
		if s.search.outgrown(x) {
			return nil, at, nil
		}
	}
	if err := <-errc; err != nil {
		return nil, at, err
	}
	return x, at, nil
}

// buildRow is a record read for a build: its text, then its terms.
type buildRow struct {
	rid                 int64
	body, key           string
	at                  postings.Place
	bodyTerms, keyTerms []string
}

// buildBatch is how many records a build's stages pass on at a time.
const buildBatch = 512

// scanBuildRows reads the live records (in records_fts or pending) in
// tx, by rid, and sends them in batches to out.
func scanBuildRows(ctx context.Context, tx *sql.Tx, out chan<- []buildRow) error {
	rows, err := tx.QueryContext(ctx, `SELECT r.rid, r.body, r.key, r.tenant, r.owner, r.audience, r.state, r.head, r.expires_at, r.namespace, r.class, r.created_at, r.metadata FROM records r
 WHERE NOT r.erased ORDER BY r.rid`)
	if err != nil {
		return err
	}
	defer rows.Close()
	batch := make([]buildRow, 0, buildBatch)
	send := func() bool {
		select {
		case out <- batch:
			batch = make([]buildRow, 0, buildBatch)
			return true
		case <-ctx.Done():
			return false
		}
	}
	for rows.Next() {
		var r buildRow
		var tenant, owner, audience, state string
		var head bool
		var expires sql.NullInt64
		if err := rows.Scan(&r.rid, &r.body, &r.key, &tenant, &owner, &audience, &state, &head, &expires, &r.at.Namespace, &r.at.Class, &r.at.Created, &r.at.Meta); err != nil {
			return err
		}
		r.at.Part, r.at.Owner, r.at.Key, r.at.Expires = searchPart(tenant, owner, audience, searchLive(state, head, r.key)), searchOwner(tenant, owner), r.key, expiresAt(expires)
		if batch = append(batch, r); len(batch) == buildBatch && !send() {
			return ctx.Err()
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(batch) > 0 && !send() {
		return ctx.Err()
	}
	return nil
}

// outgrown reports whether x passes the memory bound, and if so turns the
// copy off (FTS5 ranks from then on) and says so.
func (si *searchIndex) outgrown(x *postings.Index) bool {
	if x.Bytes() <= si.limit {
		return false
	}
	si.mu.Lock()
	si.over = true
	si.mu.Unlock()
	slog.Warn("search: the in-memory index passed its memory bound; ranking with FTS5 from now on (raise --search-memory to keep it)",
		"bound_bytes", si.limit, "records", x.Rows())
	return true
}
