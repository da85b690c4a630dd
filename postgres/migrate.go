package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded schema change.
type migration struct {
	Version int
	Name    string
	SQL     string
}

var migrationName = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.sql$`)

// migrations lists the embedded migrations in version order. Numbers
// need not follow each other: a migration applies when its number is
// above the database's.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		m := migrationName.FindStringSubmatch(path.Base(n))
		if m == nil {
			return nil, fmt.Errorf("postgres: migration file %s is not named NNN_name.sql", n)
		}
		v, _ := strconv.Atoi(m[1])
		text, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{Version: v, Name: m[2], SQL: string(text)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version < 1 || i > 0 && m.Version == out[i-1].Version {
			return nil, fmt.Errorf("postgres: migrations must be numbered 001, 002, … each once; found %03d twice or out of range", m.Version)
		}
	}
	return out, nil
}

// SchemaVersion is the schema version this package migrates to.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		panic(err) // the embedded files are checked by the tests
	}
	return ms[len(ms)-1].Version
}

// migrate applies the pending migrations, each in its own transaction with
// its row in schema_migrations, while holding a session advisory lock so
// that servers starting together apply each migration once.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("opening postgres store: %w", unavailable(err))
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return fmt.Errorf("opening postgres store: %w", classify(err))
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return fmt.Errorf("opening postgres store: creating schema_migrations: %w (does the user have CREATE on the database?)", classify(err))
	}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("opening postgres store: %w", classify(err))
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("opening postgres store: %w", classify(err))
	}
	done := map[int]bool{}
	current := 0
	for _, v := range applied {
		done[int(v)], current = true, max(current, int(v))
	}
	if last := ms[len(ms)-1].Version; current > last {
		return fmt.Errorf("opening postgres store: the database schema is at version %d but this custody knows only %d; upgrade custody", current, last)
	}
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			if step := migrationSteps[m.Name]; step != nil {
				if err := step(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
		if err != nil {
			return fmt.Errorf("opening postgres store: migration %03d_%s: %w", m.Version, m.Name, classify(err))
		}
	}
	return nil
}
