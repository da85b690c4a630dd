package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/canon"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestErasureLeavesNoCopy: on a served store, an owner's erasure
// (DELETE /v1/memories/{id}?erase=true) of an e-mailed memory that an MCP
// search and get showed her model (which copied its body into an
// observation of the MCP session), and a user's erasure request for
// herself (POST /v1/subjects/{name}/erase), leave no byte sequence of the
// erased bodies (as written, lower-cased, in the gate's canonical form,
// each stemmed search term) in the store: on SQLite in none of its files
// (database, WAL, shared memory), read with the server idle and again
// once it stopped; on PostgreSQL in no tuple, visible or dead, of any of
// its tables (TOAST included), read with pageinspect after the erasure's
// vacuum. The twin: the other records are still in the store and found
// by search, the check finds the bodies before the erasure, and custody
// verify passes afterwards.
func TestErasureLeavesNoCopy(t *testing.T) {
	type backend struct {
		name  string
		flags []string
		// has reports which of needles the store holds.
		has func(t *testing.T, needles []string) []string
	}
	db := filepath.Join(t.TempDir(), "c.db")
	bs := []backend{{"sqlite", []string{"--db", db}, func(t *testing.T, needles []string) []string {
		return filesHold(t, needles, db, db+"-wal", db+"-shm")
	}}}
	if os.Getenv("CUSTODY_TEST_POSTGRES") != "" {
		dsn := postgresDB(t)
		bs = append(bs, backend{"postgres", []string{"--postgres", dsn, "--key", filepath.Join(t.TempDir(), "pg.key")}, func(t *testing.T, needles []string) []string {
			return tuplesHold(t, dsn, needles)
		}})
	}
	const (
		mailed  = "Quillfeather Brandywick wired 4471-8830 to Zanzibarvault@Obscuromail.example"
		locker  = "Locker combination: Vermilionotter 5512, spare key under Marzipanthrush"
		diary   = "Dreamt of Glimmerhollow Pinecastle"
		keptOwn = "Alice prefers Saffronkestrel tea"
		keptBob = "Bob parks near Lanternwhistle gate"
	)
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			cliOn := func(args ...string) (int, string, string) { return cli(append(args, b.flags...)...) }
			tokens := map[string]string{}
			for _, p := range [][]string{{"alice", "user"}, {"carol", "user"}, {"bob", "user"}, {"mail", "agent", "tool:email"}} {
				args := []string{"principal", "add", "--tenant", "acme", "--name", p[0], "--role", p[1]}
				if len(p) > 2 {
					args = append(args, "--channel", p[2])
				}
				code, tok, msg := cliOn(args...)
				if code != 0 {
					t.Fatalf("principal add %s: %s", p[0], msg)
				}
				tokens[p[0]] = strings.TrimSpace(tok)
			}
			s := runServed(t, b.flags...)
			call := func(who, method, path string, body any, want int) []byte {
				t.Helper()
				var rd io.Reader
				if body != nil {
					j, _ := json.Marshal(body)
					rd = bytes.NewReader(j)
				}
				req, _ := http.NewRequest(method, s.url+path, rd)
				req.Header.Set("Authorization", "Bearer "+tokens[who])
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				raw, _ := io.ReadAll(res.Body)
				if res.StatusCode != want {
					t.Fatalf("%s %s as %s: %d %s, want %d", method, path, who, res.StatusCode, raw, want)
				}
				return raw
			}
			remember := func(who string, m map[string]any, want int) string {
				var d custody.Decision
				json.Unmarshal(call(who, "POST", "/v1/memories", m, want), &d)
				return d.ID
			}
			search := func(who, q string) string {
				return string(call(who, "POST", "/v1/search", map[string]any{"query": q}, 200))
			}
			gone := remember("mail", map[string]any{"subject": "alice", "namespace": "inbox", "class": "episode", "body": mailed, "channel": "tool:email"}, 201)
			kept := remember("alice", map[string]any{"namespace": "n", "class": "preference", "body": keptOwn, "channel": "user"}, 201)
			remember("carol", map[string]any{"namespace": "n", "class": "fact", "body": locker, "channel": "user"}, 201)
			remember("carol", map[string]any{"namespace": "n", "class": "episode", "body": diary, "channel": "user"}, 201)
			bobs := remember("bob", map[string]any{"namespace": "n", "class": "fact", "body": keptBob, "channel": "user"}, 201)

			// Alice's model reads the e-mail through MCP: the read copies
			// its body into an observation of the MCP session.
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "erase-test", Version: "1"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: &http.Client{Transport: bearerRoundTripper(tokens["alice"])}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			found, _ := callTool[mcpserver.SearchOutput](t, cs, mcpserver.ToolSearch, map[string]any{"query": "Quillfeather"})
			if len(found.Items) != 1 || found.Items[0].ID != gone {
				t.Fatalf("alice's MCP search: %+v; want the e-mail", found.Items)
			}
			if got, _ := callTool[mcpserver.Memory](t, cs, mcpserver.ToolGet, map[string]any{"id": gone}); got.Body != mailed {
				t.Fatalf("alice's MCP get: %+v", got)
			}
			cs.Close()
			search("carol", "Vermilionotter") // SQLite moves the pending records into its indexes before a search

			needles := erasureNeedles(mailed, locker, diary)
			if got := b.has(t, []string{mailed, locker, diary, keptOwn, keptBob}); len(got) != 5 {
				t.Fatalf("before the erasures the store holds %q of the five bodies: the check does not read what it claims", got)
			}

			call("alice", "DELETE", "/v1/memories/"+gone+"?erase=true&reason=mine", nil, 200)
			var rc custody.ErasureReceipt
			json.Unmarshal(call("carol", "POST", "/v1/subjects/carol/erase", map[string]any{"reason": "request 12"}, 200), &rc)
			if len(rc.Erased) != 2 {
				t.Fatalf("carol's erasure: %+v", rc)
			}

			if got := b.has(t, needles); len(got) != 0 {
				t.Errorf("with the server idle after the erasures, the store still holds %q", got)
			}
			if got := b.has(t, []string{keptOwn, keptBob}); len(got) != 2 {
				t.Errorf("the records nobody erased: the store holds %q of them", got)
			}
			if r := search("alice", "Saffronkestrel"); !strings.Contains(r, kept) {
				t.Errorf("alice's own record after the erasure: %s", r)
			}
			if r := search("bob", "Lanternwhistle"); !strings.Contains(r, bobs) {
				t.Errorf("bob's record after the erasures: %s", r)
			}
			if r := search("alice", "Quillfeather"); strings.Contains(r, gone) {
				t.Errorf("alice's search still finds the erased e-mail: %s", r)
			}
			s.stop()
			if got := b.has(t, needles); len(got) != 0 {
				t.Errorf("with the server stopped, the store still holds %q", got)
			}
			if code, out, msg := cliOn("verify"); code != 0 {
				t.Errorf("verify after the erasures: %d %s %s", code, out, msg)
			}
		})
	}
}

// erasureNeedles are the byte sequences of bodies no store may hold once
// they are erased: each body as written, lower-cased and in the gate's
// canonical form, its e-mail addresses as the gate marks them, and each of
// its search terms of five bytes or more (shorter ones occur by chance in
// any file).
func erasureNeedles(bodies ...string) []string {
	var out []string
	for _, b := range bodies {
		out = append(out, b, strings.ToLower(b), canon.Ident(b))
		out = append(out, canon.Emails(b)...)
		for _, term := range lexical.Document(b) {
			if len(term) >= 5 {
				out = append(out, term)
			}
		}
	}
	return out
}

// filesHold returns the needles that occur in any of the files.
func filesHold(t *testing.T, needles []string, files ...string) []string {
	t.Helper()
	var all [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b)
	}
	var out []string
	for _, n := range needles {
		for i, b := range all {
			if bytes.Contains(b, []byte(n)) {
				out = append(out, fmt.Sprintf("%s (in %s)", n, filepath.Base(files[i])))
				break
			}
		}
	}
	return out
}

// tuplesHold returns the needles that occur in a tuple, visible or dead,
// of a table of the database at dsn or of its TOAST table, as pageinspect
// reads them from the pages.
func tuplesHold(t *testing.T, dsn string, needles []string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pageinspect"); err != nil {
		t.Fatalf("pageinspect (PostgreSQL's contrib, and a superuser) reads the tuples: %v", err)
	}
	rows, err := conn.Query(ctx, `SELECT c.oid::regclass::text FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
 UNION ALL SELECT x.oid::regclass::text FROM pg_class c JOIN pg_class x ON x.oid = c.reltoastrelid WHERE c.relnamespace = 'public'::regnamespace`)
	if err != nil {
		t.Fatal(err)
	}
	rels, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) < 10 {
		t.Fatalf("the database has %d tables: %q", len(rels), rels)
	}
	var out []string
	for _, n := range needles {
		for _, rel := range rels {
			var hits int
			err := conn.QueryRow(ctx, `SELECT count(*) FROM generate_series(0, pg_relation_size($1::regclass) / current_setting('block_size')::int - 1) AS p,
 heap_page_items(get_raw_page($1::text, p::int)) AS h WHERE h.t_data IS NOT NULL AND position($2::bytea IN h.t_data) > 0`, rel, []byte(n)).Scan(&hits)
			if err != nil {
				t.Fatalf("reading the tuples of %s: %v", rel, err)
			}
			if hits > 0 {
				out = append(out, fmt.Sprintf("%s (in %d tuples of %s)", n, hits, rel))
				break
			}
		}
	}
	return out
}

// bearerRoundTripper sends every request with the bearer token.
func bearerRoundTripper(token string) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
