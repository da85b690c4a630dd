package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/custody-mem/custody"
	"github.com/danielgtaylor/huma/v2"
)

// authoritySchema documents custody.Authority, an integer in Go that is a
// name on the wire.
type authoritySchema string

func (authoritySchema) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Enum: []any{"external", "agent", "user", "confirmed"},
		Description: "how far the record may be trusted: external < agent < user < confirmed"}
}

// stateSchema documents custody.State.
type stateSchema string

func (stateSchema) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Enum: []any{"admitted", "quarantined", "pending_confirmation", "pending", "rejected", "retired", "suspended"}}
}

// classSchema documents custody.Class.
type classSchema string

func (classSchema) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Enum: []any{"preference", "fact", "episode", "procedure"}}
}

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// mustOpenAPI renders the OpenAPI 3.1 document of the route table. Component
// schemas come from the request and response types the handlers decode and
// encode.
func mustOpenAPI(routes []route) []byte {
	reg := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	reg.RegisterTypeAlias(reflect.TypeFor[custody.Authority](), reflect.TypeFor[authoritySchema]())
	reg.RegisterTypeAlias(reflect.TypeFor[custody.State](), reflect.TypeFor[stateSchema]())
	reg.RegisterTypeAlias(reflect.TypeFor[custody.Class](), reflect.TypeFor[classSchema]())
	doc := &huma.OpenAPI{
		OpenAPI: "3.1.0",
		Info: &huma.Info{
			Title:   "custody",
			Version: "v1",
			Description: "A long-term memory server for LLM agents that cannot be quietly poisoned. " +
				"Every error answer is {\"error\": {\"code\", \"message\"}}; an absent record and one the caller may not see " +
				"give the same 404. Path ids that cannot be ids are answered as absent.",
		},
		Paths: map[string]*huma.PathItem{},
		Components: &huma.Components{
			Schemas: reg,
			SecuritySchemes: map[string]*huma.SecurityScheme{
				"bearer": {Type: "http", Scheme: "bearer", Description: "a principal's token, from `custody principal add`"},
			},
		},
	}
	doc.Components.Responses = map[string]*huma.Response{"Error": {
		Description: "an error: {\"error\": {\"code\", \"message\"}}",
		Content:     map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeFor[ErrorBody](), true, "ErrorBody")}},
	}}
	for _, rt := range routes {
		op := &huma.Operation{
			OperationID: operationID(rt),
			Summary:     rt.summary,
			Tags:        []string{rt.tag},
			Responses:   map[string]*huma.Response{},
		}
		if !rt.public {
			op.Security = []map[string][]string{{"bearer": {}}}
		}
		for _, m := range pathParamRE.FindAllStringSubmatch(rt.path, -1) {
			doc := "an id; one that cannot be an id is answered as absent (404)"
			if m[1] != "id" {
				doc = "a " + m[1]
			}
			op.Parameters = append(op.Parameters, &huma.Param{Name: m[1], In: "path", Required: true,
				Schema: &huma.Schema{Type: huma.TypeString}, Description: doc})
		}
		for _, p := range rt.query {
			typ := huma.TypeString
			if p.integer {
				typ = huma.TypeInteger
			}
			op.Parameters = append(op.Parameters, &huma.Param{Name: p.name, In: "query", Required: p.required,
				Description: p.doc, Schema: &huma.Schema{Type: typ}})
		}
		if rt.request != nil {
			content := map[string]*huma.MediaType{
				"application/json": {Schema: reg.Schema(reflect.TypeOf(rt.request), true, typeName(rt.request))},
			}
			if rt.textBody {
				content["text/plain"] = &huma.MediaType{Schema: &huma.Schema{Type: huma.TypeString}}
			}
			op.RequestBody = &huma.RequestBody{Required: !rt.optionalBody, Content: content}
		}
		ok := &huma.Response{Description: http.StatusText(rt.status)}
		switch {
		case rt.response != nil:
			ok.Content = map[string]*huma.MediaType{
				"application/json": {Schema: reg.Schema(reflect.TypeOf(rt.response), true, typeName(rt.response))},
			}
		case rt.contentType != "":
			ok.Content = map[string]*huma.MediaType{rt.contentType: {}}
		}
		for _, st := range append([]int{rt.status}, rt.alsoStatus...) {
			op.Responses[strconv.Itoa(st)] = &huma.Response{Description: http.StatusText(st), Content: ok.Content}
		}
		errs := []int{http.StatusInternalServerError}
		if !rt.public {
			errs = append(errs, http.StatusBadRequest, http.StatusUnauthorized, http.StatusTooManyRequests)
		}
		if rt.request != nil { // past the server's body budget (body_budget.go)
			errs = append(errs, http.StatusServiceUnavailable)
		}
		for _, st := range append(errs, rt.errors...) {
			op.Responses[strconv.Itoa(st)] = &huma.Response{Ref: "#/components/responses/Error"}
		}
		item := doc.Paths[rt.path]
		if item == nil {
			item = &huma.PathItem{}
			doc.Paths[rt.path] = item
		}
		switch rt.method {
		case http.MethodGet:
			item.Get = op
		case http.MethodPost:
			item.Post = op
		case http.MethodPut:
			item.Put = op
		case http.MethodDelete:
			item.Delete = op
		case http.MethodPatch:
			item.Patch = op
		default:
			panic(fmt.Sprintf("httpapi: route %s: method not documented", rt.pattern()))
		}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("httpapi: rendering the OpenAPI document: %v", err))
	}
	return append(b, '\n')
}

// operationID names a route: "post-v1-memories-id-confirm".
func operationID(rt route) string {
	p := strings.NewReplacer("{", "", "}", "", ".", "-").Replace(rt.path)
	return strings.ToLower(rt.method) + strings.ReplaceAll(p, "/", "-")
}

func typeName(v any) string { return reflect.TypeOf(v).Name() }

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(s.openapi)))
	w.WriteHeader(http.StatusOK)
	w.Write(s.openapi)
	return nil
}
