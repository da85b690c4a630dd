package tamper

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// testMetadataHTTP writes, reads and filters metadata through the API and
// then edits it behind the store's back: out-of-bounds metadata is a 400
// naming the field with nothing written (also in a batch), a record comes
// back with its metadata from get, list and search, the metadata filters
// of list (metadata.<key>=) and search ("metadata": {}) keep only matching
// records, and verify names an edited metadata object and the metadata
// left on an erased record.
func testMetadataHTTP(t *testing.T, b Backend) {
	e := newTamperEnv(t, b)
	_, alice := e.add("alice", []string{"user"})
	note := func(body string, meta any) map[string]any {
		m := map[string]any{"namespace": "n", "class": "fact", "body": body, "channel": "user"}
		if meta != nil {
			m["metadata"] = meta
		}
		return m
	}
	items := func(a answer) (ids []string, metas []map[string]string) {
		t.Helper()
		var page struct {
			Items []struct {
				ID       string
				Metadata map[string]string
			}
		}
		if err := json.Unmarshal([]byte(a.body), &page); err != nil || a.status != http.StatusOK {
			t.Fatalf("%d %s (%v)", a.status, a.body, err)
		}
		for _, it := range page.Items {
			ids, metas = append(ids, it.ID), append(metas, it.Metadata)
		}
		return ids, metas
	}
	long := strings.Repeat("x", 513)
	many := map[string]string{}
	for i := range 17 {
		many[string(rune('a'+i))] = "v"
	}
	for _, bad := range []any{
		map[string]string{"Project": "x"},
		map[string]string{"project name": "x"},
		map[string]string{strings.Repeat("k", 65): "x"},
		map[string]string{"k": long},
		map[string]string{"k": "a\x01b"},
		many,
		map[string]any{"k": 7},
		[]string{"k"},
	} {
		a := e.do(alice, "POST", "/v1/memories", note("refused", bad))
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, "metadata") {
			t.Errorf("metadata %v: %d %s; want 400 naming metadata", bad, a.status, a.body)
		}
		a = e.do(alice, "POST", "/v1/memories/batch", map[string]any{"items": []any{note("fine", nil), note("refused", bad)}})
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, "items[1]") {
			t.Errorf("a batch with metadata %v: %d %s; want 400 naming items[1]", bad, a.status, a.body)
		}
	}
	if ids, _ := items(e.do(alice, "GET", "/v1/memories", nil)); len(ids) != 0 {
		t.Fatalf("refused writes left records: %v", ids)
	}

	apollo := e.do(alice, "POST", "/v1/memories", note("the apollo launch plan", map[string]string{"project": "apollo", "owner": "bob", "state": "rejected"}))
	e.expect(apollo, http.StatusCreated, "")
	var d struct{ ID string }
	json.Unmarshal([]byte(apollo.body), &d)
	batch := e.do(alice, "POST", "/v1/memories/batch", map[string]any{"items": []any{
		note("the gemini launch plan", map[string]string{"project": "gemini"}), note("a plan with no metadata", nil)}})
	e.expect(batch, http.StatusOK, "")

	get := e.do(alice, "GET", "/v1/memories/"+d.ID, nil)
	var rec struct {
		Owner, State string
		Metadata     map[string]string
	}
	json.Unmarshal([]byte(get.body), &rec)
	if rec.Owner != "alice" || rec.State != "admitted" || rec.Metadata["project"] != "apollo" || rec.Metadata["owner"] != "bob" {
		t.Errorf("get: %s; want alice's admitted record with its metadata as sent", get.body)
	}
	if ids, metas := items(e.do(alice, "GET", "/v1/memories?metadata.project=apollo", nil)); len(ids) != 1 || ids[0] != d.ID || metas[0]["project"] != "apollo" {
		t.Errorf("list metadata.project=apollo: %v %v; want [%s] with its metadata", ids, metas, d.ID)
	}
	if ids, _ := items(e.do(alice, "GET", "/v1/memories?"+url.Values{"metadata.project": {"apollo"}, "metadata.owner": {"carol"}}.Encode(), nil)); len(ids) != 0 {
		t.Errorf("list metadata.project=apollo&metadata.owner=carol: %v; want none (filters are ANDed)", ids)
	}
	if ids, _ := items(e.do(alice, "GET", "/v1/memories", nil)); len(ids) != 3 {
		t.Errorf("list without filters: %v; want all 3", ids)
	}
	if ids, metas := items(e.do(alice, "POST", "/v1/search", map[string]any{"query": "launch plan", "metadata": map[string]string{"project": "gemini"}})); len(ids) != 1 || metas[0]["project"] != "gemini" {
		t.Errorf("search with metadata project=gemini: %v %v; want the gemini plan", ids, metas)
	}
	if ids, _ := items(e.do(alice, "POST", "/v1/search", map[string]any{"query": "launch plan"})); len(ids) != 3 {
		t.Errorf("search without filters: %v; want all 3", ids)
	}
	for _, path := range []string{"/v1/memories?metadata.Bad=x", "/v1/memories?created_after=yesterday", "/v1/memories?key_prefix=a%20b",
		"/v1/memories?created_after=2030-01-02T00:00:00Z&created_before=2030-01-01T00:00:00Z"} {
		if a := e.do(alice, "GET", path, nil); a.status != http.StatusBadRequest {
			t.Errorf("GET %s: %d %s; want 400", path, a.status, a.body)
		}
	}
	if a := e.do(alice, "POST", "/v1/search", map[string]any{"query": "plan", "created_before": "soon"}); a.status != http.StatusBadRequest || !strings.Contains(a.body, "created_before") {
		t.Errorf("search with created_before soon: %d %s; want 400 naming created_before", a.status, a.body)
	}
	e.verify()

	// An insider's edit of the metadata is caught by verify.
	e.exec(`UPDATE records SET metadata = '{"project":"mercury"}' WHERE id = '%s'`, d.ID)
	e.verify("record "+d.ID, "metadata")
	e.exec(`UPDATE records SET metadata = '' WHERE id = '%s'`, d.ID)
	e.verify("record "+d.ID, "metadata")
	e.exec(`UPDATE records SET metadata = '{"owner":"bob","project":"apollo","state":"rejected"}' WHERE id = '%s'`, d.ID)
	e.verify()

	// Erasure takes the metadata with the body; metadata put back on the
	// erased record is named.
	e.expect(e.do(alice, "DELETE", "/v1/memories/"+d.ID+"?erase=true", nil), http.StatusOK, "")
	e.verify()
	e.exec(`UPDATE records SET metadata = '{"project":"apollo"}' WHERE id = '%s'`, d.ID)
	e.verify("record "+d.ID, "erased but still holds metadata")
}
