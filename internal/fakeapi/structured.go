package fakeapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
)

// Structured output: each fake accepts its provider's way of asking for JSON that follows a schema (OpenAI
// response_format json_schema, Gemini responseJsonSchema, Anthropic output_config.format), checks the
// schema as the provider does, and answers with the JSON that SetStructured's function writes — by default
// Instance of the schema — as the provider returns it (the message content, the text part, a text block).

// SetStructured replaces the structured answer: f receives the last user message and the schema and returns
// the JSON text. A test can return what the schema does not allow (an unknown enum value) to see the
// client validate it: providers that do not enforce a schema can answer so.
func (s *Server) SetStructured(f func(prompt string, schema map[string]any) string) {
	s.mu.Lock()
	s.structured = f
	s.mu.Unlock()
}

// StructuredCalls counts the structured (JSON schema) generations answered successfully.
func (s *Server) StructuredCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.structuredCalls
}

func (s *Server) structuredFor(prompt string, schema map[string]any) string {
	s.mu.Lock()
	f := s.structured
	s.structuredCalls++
	s.mu.Unlock()
	if f != nil {
		return f(prompt, schema)
	}
	b, _ := json.Marshal(Instance(schema))
	return string(b)
}

// Instance is the smallest value schema allows: an object with its required properties, an empty array,
// the first value of an enum, "", 0 or false.
func Instance(schema map[string]any) any {
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	switch schema["type"] {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for _, r := range stringList(schema["required"]) {
			p, _ := props[r].(map[string]any)
			out[r] = Instance(p)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		return 0
	case "boolean":
		return false
	case "null":
		return nil
	}
	return ""
}

func stringList(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = x
	}
	return out
}

var schemaName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// strictProblem returns what a strict structured-output schema (OpenAI strict mode, Anthropic structured
// outputs) may not have, "" when it is fine: every object lists its properties, requires each of them and
// sets additionalProperties to false; every node has a type (or an enum, or anyOf) the subset knows.
func strictProblem(schema map[string]any, path string) string {
	if schema == nil {
		return path + ": schema must be an object"
	}
	if alts, ok := schema["anyOf"].([]any); ok {
		for i, a := range alts {
			m, _ := a.(map[string]any)
			if p := strictProblem(m, fmt.Sprintf("%s.anyOf[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	}
	typ, _ := schema["type"].(string)
	if _, ok := schema["enum"]; ok && typ == "" {
		return ""
	}
	switch typ {
	case "object":
		props, ok := schema["properties"].(map[string]any)
		if !ok {
			return path + ": an object needs 'properties'"
		}
		if ap, ok := schema["additionalProperties"].(bool); !ok || ap {
			return path + ": 'additionalProperties' is required to be supplied and to be false"
		}
		req := stringList(schema["required"])
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !slices.Contains(req, k) {
				return fmt.Sprintf("%s: 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'", path, k)
			}
			m, _ := props[k].(map[string]any)
			if p := strictProblem(m, path+".properties."+k); p != "" {
				return p
			}
		}
	case "array":
		m, ok := schema["items"].(map[string]any)
		if !ok {
			return path + ": an array needs 'items'"
		}
		return strictProblem(m, path+".items")
	case "string", "integer", "number", "boolean", "null":
	default:
		return fmt.Sprintf("%s: type %q is not supported", path, typ)
	}
	return ""
}
