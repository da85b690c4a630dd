package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
	"pgregory.net/rapid"
)

// testListMatchesGet writes random records — three users, two groups, every
// audience, keyed versions, quarantined email writes, retirements — and
// checks that each user's paginated list, with and without a namespace,
// returns exactly the records that user can get, newest first. Backends may
// merge one walk per audience to build a page; this pins that the merge
// neither loses nor repeats a record across pages.
func testListMatchesGet(t *testing.T, e *env) {
	names := []string{"alice", "bob", "carol"}
	iter := 0
	rapid.Check(t, func(rt *rapid.T) {
		iter++ // a tenant per case, so that a list without a namespace sees only the case's records
		tenant := fmt.Sprintf("list%d", iter)
		users := map[string]*custody.Caller{
			"alice": e.user(tenant, "alice", "fin"),
			"bob":   e.user(tenant, "bob", "fin", "ops"),
			"carol": e.user(tenant, "carol"),
		}
		harness := e.act(e.principal(tenant, "harness", []string{"agent"}, []string{"tool:email"}, nil), "alice")
		rev := e.act(e.principal(tenant, "rev", []string{"reviewer"}, nil, nil), "")
		var all []string
		nss := []string{"a", "b"}
		for range rapid.IntRange(1, 25).Draw(rt, "writes") {
			who := rapid.SampledFrom(names).Draw(rt, "owner")
			c := users[who]
			aud := rapid.SampledFrom([]string{"", "tenant", "group:fin", "group:ops"}).Draw(rt, "audience")
			if g, ok := cutGroupName(aud); ok && !slices.Contains(c.Subject.Groups, g) {
				aud = ""
			}
			in := custody.Candidate{Namespace: rapid.SampledFrom(nss).Draw(rt, "ns"), Class: custody.ClassFact,
				Body: fmt.Sprintf("%s wrote %d", who, len(all)), Channel: "user", Audience: aud}
			if rapid.Bool().Draw(rt, "keyed") {
				in.Key = rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "key")
				in.Class = custody.ClassPreference
			}
			if who == "alice" && rapid.IntRange(0, 4).Draw(rt, "email") == 0 {
				c, in.Channel = harness, "tool:email"
			}
			d, err := e.svc.Remember(e.ctx, c, in)
			if err != nil {
				rt.Fatalf("remember %+v: %v", in, err)
			}
			all = append(all, d.ID)
			if rapid.IntRange(0, 5).Draw(rt, "retire") == 0 {
				e.svc.Retire(e.ctx, rev, d.ID, "", false)
			}
		}
		for _, who := range names {
			c := users[who]
			for _, ns := range []string{"", nss[0]} {
				var want []string
				for _, id := range slices.Backward(all) {
					r, err := e.svc.Get(e.ctx, c, id)
					if err == nil && (ns == "" || r.Namespace == ns) {
						want = append(want, id)
					} else if err != nil && !errors.Is(err, custody.ErrNotFound) {
						rt.Fatal(err)
					}
				}
				got := listAll(rt, e, c, custody.ListInput{Namespace: ns, Limit: 3})
				if !slices.Equal(got, want) {
					rt.Fatalf("%s lists %d records in %q, can get %d:\nlist %v\nget  %v", who, len(got), ns, len(want), got, want)
				}
			}
		}
	})
}

// listAll follows a list's cursor to the end.
func listAll(rt *rapid.T, e *env, c *custody.Caller, in custody.ListInput) []string {
	var out []string
	for range 10000 {
		p, err := e.svc.List(e.ctx, c, in)
		if err != nil {
			rt.Fatal(err)
		}
		for _, r := range p.Items {
			out = append(out, r.ID)
		}
		if p.NextCursor == "" {
			return out
		}
		in.Cursor = p.NextCursor
	}
	rt.Fatal("the list did not end")
	return nil
}

func cutGroupName(aud string) (string, bool) {
	const prefix = "group:"
	if len(aud) > len(prefix) && aud[:len(prefix)] == prefix {
		return aud[len(prefix):], true
	}
	return "", false
}
