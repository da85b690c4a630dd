package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
)

// referenceBatch decodes a batch body whole, as the server did before it
// decoded batches as they arrive: the reference decodeBatch is fuzzed
// against.
func referenceBatch(querySubject string, body []byte) (string, []custody.Candidate, error) {
	var req BatchRequest
	if err := decodeBytes(body, &req, false); err != nil {
		return "", nil, err
	}
	if len(req.Items) > custody.MaxBatch {
		return "", nil, errors.New("too many items")
	}
	subject := req.Subject
	if querySubject != "" {
		if subject != "" && subject != querySubject {
			return "", nil, errors.New("two subjects")
		}
		subject = querySubject
	}
	var cands []custody.Candidate
	for i := range req.Items {
		if req.Items[i].Subject != "" && req.Items[i].Subject != subject {
			return "", nil, fmt.Errorf("item %d: another subject", i)
		}
		c, err := req.Items[i].candidate()
		if err != nil {
			return "", nil, fmt.Errorf("item %d: %w", i, err)
		}
		cands = append(cands, c)
	}
	return subject, cands, nil
}

// FuzzDecodeBatch feeds arbitrary bodies (and ?subject=) to the decoder of
// POST /v1/memories/batch, which reads them as they arrive, and compares
// it with decoding the body whole (referenceBatch): every refusal is a
// clean 4xx with a code; what it takes, the whole decoding takes too, with
// the same subject and candidates; and what the whole decoding takes, it
// refuses only for what it checks more strictly (a field given twice, an
// item larger than one write).
func FuzzDecodeBatch(f *testing.F) {
	good := `{"namespace":"n","class":"fact","body":"x","channel":"user"}`
	for _, s := range []string{
		`{"items":[` + good + `]}`, `{"subject":"alice","items":[` + good + `,` + good + `]}`, `{"items":[` + good + `],"subject":"alice"}`,
		`{"Items":[` + good + `],"SUBJECT":"alice"}`, `{"items":[{"namespace":"n","class":"fact","body":"x","channel":"user","subject":"bob"}]}`,
		`{"items":[` + good + `],"items":[]}`, `{"items":[` + good + `]} {}`, `{"items":[` + good + `]}x`, `{"items":` + good + `}`,
		`{"items":[5]}`, `{"items":[null]}`, `{"items":null}`, `null`, `[]`, `{}`, ``, ` `, `{`, `{"items":[`, `{"items":[` + good,
		`{"items":[{"namespace":"n","class":"fact","body":"\ud800","channel":"user"}]}`, `{"subject":"\ud800","items":[]}`,
		`{"subject":5,"items":[]}`, `{"extra":1}`, `{"items":[{"namespace":"n","class":5}]}`,
		`{"items":[{"namespace":"n","class":"fact","body":"x","channel":"user","expires_at":"soon"}]}`,
		`{"items":[{"namespace":"n","class":"fact","body":"x","channel":"user","metadata":{"project":"p"},"derived_from":[{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","weight":0.5}]}]}`,
		`{"ſubject":"alice","items":[]}`, `{"items":[{"NAMESPACE":"n","class":"fact","body":"x","channel":"user"}]}`,
		`{"items":[` + good + `,{"namespace":"n","class":"fact","channel":"user","body":"` + strings.Repeat("y", 5000) + `"}]}`,
	} {
		f.Add("", []byte(s))
	}
	f.Add("alice", []byte(`{"items":[`+good+`]}`))
	f.Add("alice", []byte(`{"subject":"bob","items":[`+good+`]}`))
	f.Add("alice", []byte(`{"items":[{"namespace":"n","class":"fact","body":"x","channel":"user","subject":"bob"}],"subject":"alice"}`))
	e := newEnv(f, Options{MaxBodyBytes: 4 << 10, MaxBatchBytes: 64 << 10, RatePerSecond: -1})
	f.Fuzz(func(t *testing.T, subject string, body []byte) {
		target := "/v1/memories/batch"
		if subject != "" {
			target += "?" + url.Values{"subject": {subject}}.Encode()
		}
		r := httptest.NewRequest("POST", target, bytes.NewReader(body))
		gotSubject, got, err := e.api.decodeBatch(httptest.NewRecorder(), r)
		wantSubject, wantCands, refErr := referenceBatch(r.URL.Query().Get("subject"), body)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status/100 != 4 || ae.code == "" || ae.message == "" {
				t.Fatalf("error %v is not a clean 4xx with a code and a message", err)
			}
			if refErr == nil && !strings.Contains(ae.message, "appears twice") && ae.code != codeBodyTooLarge {
				t.Fatalf("refused (%d %s %q) a body the whole decoding takes", ae.status, ae.code, ae.message)
			}
			return
		}
		if refErr != nil {
			t.Fatalf("took a body the whole decoding refuses (%v)", refErr)
		}
		if gotSubject != wantSubject || !reflect.DeepEqual(got, wantCands) {
			t.Fatalf("took subject %q and %+v; the whole decoding %q and %+v", gotSubject, got, wantSubject, wantCands)
		}
	})
}
