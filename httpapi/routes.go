package httpapi

import (
	"net/http"
	"slices"

	"github.com/custody-mem/custody"
)

// route is one entry of the API: how it is served and how it is documented.
// The same table registers the handlers and produces the OpenAPI paths.
type route struct {
	method, path string
	summary      string
	tag          string
	public       bool // served without a bearer token
	logRead      bool // a read of the log: the log readers' budget (readlimit.go), not the writes'
	// authInWrite: the request is one write, whose store may check the
	// principals version in the write's own round trip
	// (custody.Service.AuthenticateWrite).
	authInWrite bool

	request      any  // the JSON body's type (a zero value); nil: no body
	optionalBody bool // an empty body is allowed
	textBody     bool // text/plain is accepted as well as JSON
	query        []param

	status      int   // the success status
	alsoStatus  []int // other success statuses with the same body
	response    any   // the success body's type (a zero value); nil with contentType
	contentType string
	notFound    string // the one message of every 404 of this route
	errors      []int  // error statuses worth documenting beyond 400/401/429/500

	handler func(http.ResponseWriter, *http.Request) error
}

// param is a documented query parameter.
type param struct {
	name, doc string
	integer   bool
	required  bool
}

func (rt route) pattern() string { return rt.method + " " + rt.path }

func (rt route) notFoundMessage() string {
	if rt.notFound != "" {
		return rt.notFound
	}
	return defaultNotFound
}

var (
	subjectParam = param{name: "subject", doc: "the user to act for; required for agent principals"}
	limitParam   = param{name: "limit", doc: "page size", integer: true}
	cursorParam  = param{name: "cursor", doc: "next_cursor of the previous page"}
)

// table is the API. Every authenticated route resolves its subject with
// Service.Act, from the body's subject or ?subject=.
func (s *Server) table() []route {
	return slices.Concat(s.coreRoutes(), s.principalRoutes(), s.pauseRoutes(), s.eraseRoutes(), s.namespaceRoutes(), s.impactRoutes(), s.logProofRoutes(), s.reviewRoutes())
}

func (s *Server) coreRoutes() []route {
	return []route{
		{method: "GET", path: "/healthz", summary: "Liveness", tag: "server", public: true,
			status: 200, response: HealthResponse{}, handler: s.health},
		{method: "GET", path: "/metrics", summary: "Prometheus metrics", tag: "server", public: true,
			status: 200, contentType: "text/plain", handler: s.serveMetrics},
		{method: "GET", path: "/v1/openapi.json", summary: "This OpenAPI document", tag: "server", public: true,
			status: 200, contentType: "application/json", handler: s.serveOpenAPI},

		{method: "POST", path: "/v1/memories", summary: "Submit a candidate memory", tag: "memories",
			request: MemoryRequest{}, status: 201, alsoStatus: []int{202}, response: custody.Decision{},
			notFound: "a parent named in derived_from, or the session, was not found", errors: []int{403, 404, 409, 413, 503},
			authInWrite: true, handler: s.remember},
		{method: "POST", path: "/v1/memories/batch", summary: "Submit up to 1000 candidates, each decided on its own, in one transaction", tag: "memories",
			request: BatchRequest{}, status: 200, response: BatchResponse{}, errors: []int{403, 404, 413, 503}, handler: s.rememberBatch},
		{method: "GET", path: "/v1/memories", summary: "List eligible memories, newest version per key", tag: "memories",
			query: []param{{name: "namespace", doc: "only this namespace"},
				{name: "namespace_prefix", doc: "only this namespace and those below it (work: work, work/notes; not workshop); not with namespace"},
				{name: "key", doc: "only this key"},
				{name: "class", doc: "only this class"}, filterParams[0], filterParams[1], filterParams[2], filterParams[3], subjectParam, sessionParam, limitParam, cursorParam},
			status: 200, response: ListResponse{}, errors: []int{403}, handler: s.listMemories},
		{method: "GET", path: "/v1/memories/{id}", summary: "Get one eligible memory with its provenance", tag: "memories",
			query: []param{subjectParam, sessionParam}, status: 200, response: custody.Record{}, errors: []int{403, 404}, handler: s.getMemory},
		{method: "GET", path: "/v1/memories/{id}/history", summary: "The versions of a keyed memory, with receipts", tag: "memories",
			query: []param{subjectParam}, status: 200, response: HistoryResponse{}, errors: []int{403, 404}, handler: s.history},
		{method: "GET", path: "/v1/memories/{id}/lineage", summary: "Ancestors and descendants with weights and states", tag: "memories",
			query: []param{subjectParam}, status: 200, response: custody.Lineage{}, errors: []int{403, 404}, handler: s.lineage},
		{method: "POST", path: "/v1/memories/{id}/confirm", summary: "The owner confirms a pending_confirmation write", tag: "memories",
			request: ConfirmRequest{}, optionalBody: true, query: []param{subjectParam},
			status: 200, response: custody.Record{}, errors: []int{403, 404, 409}, handler: s.confirm},
		{method: "POST", path: "/v1/search", summary: "Rank eligible memories against plain text", tag: "memories",
			request: SearchRequest{}, status: 200, response: SearchResponse{}, errors: []int{403}, handler: s.search},

		{method: "POST", path: "/v1/memories/{id}/quarantine", summary: "Quarantine a memory and suspend its descendants", tag: "repair",
			request: QuarantineRequest{}, optionalBody: true, query: []param{subjectParam},
			status: 200, response: AffectedResponse{}, errors: []int{403, 404, 409}, handler: s.quarantine},
		{method: "POST", path: "/v1/memories/{id}/retire", summary: "Retire a memory for good and suspend its descendants", tag: "repair",
			request: RetireRequest{}, optionalBody: true, query: []param{subjectParam},
			status: 200, response: AffectedResponse{}, errors: []int{403, 404, 409}, handler: s.retire},
		{method: "POST", path: "/v1/memories/{id}/rebuild", summary: "Rebuild a suspended derived memory from its parents", tag: "repair",
			request: RebuildRequest{}, optionalBody: true, query: []param{subjectParam},
			status: 200, response: AffectedResponse{}, errors: []int{403, 404, 409}, handler: s.rebuild},

		{method: "GET", path: "/v1/review", summary: "The review queue: quarantined candidates with their proposed effect", tag: "review",
			query: []param{subjectParam, limitParam, cursorParam}, status: 200, response: ReviewResponse{}, errors: []int{403}, handler: s.reviewQueue},
		{method: "POST", path: "/v1/review/{id}/approve", summary: "Approve a quarantined candidate (authority confirmed)", tag: "review",
			request: ApproveRequest{}, optionalBody: true, query: []param{subjectParam},
			status: 200, response: custody.Record{}, errors: []int{403, 404, 409}, handler: s.approve},
		{method: "POST", path: "/v1/review/{id}/reject", summary: "Reject a candidate", tag: "review",
			request: RejectRequest{}, optionalBody: true, query: []param{subjectParam},
			status: 200, response: custody.Record{}, errors: []int{403, 404, 409}, handler: s.reject},
		{method: "POST", path: "/v1/review/reevaluate", summary: "Decide the pending candidates again under the current policy", tag: "review",
			request: SubjectRequest{}, optionalBody: true, query: []param{subjectParam},
			status: 200, response: ChangedResponse{}, errors: []int{403}, handler: s.reevaluate},

		{method: "POST", path: "/v1/sessions", summary: "Open a session for a subject", tag: "sessions",
			request: SessionRequest{}, optionalBody: true, query: []param{subjectParam},
			status: 201, response: custody.Session{}, errors: []int{403}, handler: s.openSession},
		{method: "POST", path: "/v1/sessions/{id}/observations", summary: "Record content that entered the model's context", tag: "sessions",
			request: ObservationRequest{}, query: []param{subjectParam}, notFound: "session not found",
			status: 200, response: custody.Session{}, errors: []int{403, 404}, handler: s.observe},
		{method: "POST", path: "/v1/sessions/{id}/endorse", summary: "The user endorses a source of the session for named actions (her own user credential only)", tag: "sessions",
			request: EndorseRequest{}, query: []param{subjectParam}, notFound: "session not found",
			status: 201, response: custody.Endorsement{}, errors: []int{403, 404}, handler: s.endorse},

		{method: "POST", path: "/v1/gate", summary: "Ask the action gate whether an action may run", tag: "gate",
			request: GateRequest{}, notFound: "session not found",
			status: 200, response: custody.GateDecision{}, errors: []int{403, 404}, handler: s.gate},
		{method: "POST", path: "/v1/gate/confirm", summary: "The owner confirms an exact action once", tag: "gate",
			request: GateConfirmRequest{}, status: 200, response: GateConfirmResponse{}, errors: []int{403}, handler: s.gateConfirm},

		{method: "GET", path: "/v1/log/key", summary: "The checkpoint verifier key (C2SP signed-note vkey) of a tenant's log, served without a token", tag: "log", public: true, logRead: true,
			query:  []param{{name: "tenant", doc: "the tenant whose log the key verifies (each tenant's log has its own origin, the key's name)", required: true}},
			status: 200, contentType: "text/plain", handler: s.logKey},
		{method: "GET", path: "/v1/log/status", summary: "The checkpoint of the caller's tenant's log, its verifier key and the outcome of the last custody verify of it", tag: "log", logRead: true,
			query: []param{subjectParam}, status: 200, response: LogStatusResponse{}, handler: s.logStatus},
		{method: "GET", path: "/v1/log/checkpoint", summary: "The signed checkpoint (C2SP signed note) of the caller's tenant's audit log: the current one (with a witness policy, the newest that met it)", tag: "log", logRead: true,
			query:    []param{{name: "latest", doc: "true: the newest checkpoint, signed anew if the log grew, whether or not witnesses cosigned it yet (without a witness policy, the current one is that one)"}, subjectParam},
			notFound: "no checkpoint of this log has met the witness policy yet: its witnesses have not cosigned one (GET /v1/log/checkpoint?latest=true gives the newest)",
			status:   200, contentType: "text/plain", handler: s.checkpoint},
		{method: "GET", path: "/v1/log/proof/inclusion", summary: "RFC 6962 inclusion proof of a leaf of the caller's tenant's log", tag: "log", logRead: true,
			query:  []param{{name: "index", doc: "leaf index", integer: true, required: true}, {name: "size", doc: "tree size", integer: true, required: true}, subjectParam},
			status: 200, response: InclusionProofResponse{}, handler: s.inclusionProof},
		{method: "GET", path: "/v1/log/proof/consistency", summary: "RFC 6962 consistency proof between two tree sizes of the caller's tenant's log", tag: "log", logRead: true,
			query:  []param{{name: "from", doc: "older tree size", integer: true, required: true}, {name: "to", doc: "newer tree size", integer: true, required: true}, subjectParam},
			status: 200, response: ConsistencyProofResponse{}, handler: s.consistencyProof},
		{method: "GET", path: "/v1/log/entries", summary: "A range of the caller's tenant's log entries, decoded where the caller may read them", tag: "log", logRead: true,
			query:  []param{{name: "start", doc: "first index", integer: true, required: true}, {name: "end", doc: "index after the last (at most 1000 entries)", integer: true, required: true}, subjectParam},
			status: 200, response: LogEntriesResponse{}, handler: s.logEntries},

		{method: "GET", path: "/v1/policy", summary: "The tenant's active policy", tag: "policy",
			query: []param{subjectParam}, status: 200, response: PolicyResponse{}, errors: []int{403}, handler: s.getPolicy},
		{method: "PUT", path: "/v1/policy", summary: "Replace the tenant's policy (policy_owner)", tag: "policy",
			request: PolicyRequest{}, textBody: true, query: []param{{name: "force", doc: "true installs a policy that fails its dry run on the tenant's recent candidates (they then wait as pending); without it such a policy is 400"}, subjectParam},
			status: 200, response: PolicyChangeResponse{}, errors: []int{403, 413}, handler: s.putPolicy},
	}
}

// HealthResponse is the answer of GET /healthz.
type HealthResponse struct {
	Status string `json:"status" example:"ok"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, HealthResponse{Status: "ok"})
	return nil
}
