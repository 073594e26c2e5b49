package providertest

import (
	"reflect"
	"testing"
)

// TestParseDTS: interfaces at the top and in namespaces, extends, optional
// members, types over several lines and nested object types, comments.
func TestParseDTS(t *testing.T) {
	src := `/**
 * interface NotThis {
 */
export interface Base {
    /** the model */
    model: string;
}
export interface Create extends Base {
    stream: true;
    effort?: 'low' | 'high'
        | 'max' | null;
    parameters: {
        [key: string]: unknown;
    } | null;
    strict: boolean | null;
}
export declare namespace Tool {
    interface InputSchema {
        type: 'object';
        properties?: unknown | null;
    }
}
`
	got := ParseDTS(src)
	if _, ok := got["NotThis"]; ok {
		t.Error("an interface in a comment was read")
	}
	m, ok := members(got, "Create")
	want := map[string]DTSMember{
		"model":      {Type: "string;"},
		"stream":     {Type: "true;"},
		"effort":     {Optional: true, Type: "'low' | 'high' | 'max' | null;"},
		"parameters": {Type: "{"},
		"strict":     {Type: "boolean | null;"},
	}
	if !ok || !reflect.DeepEqual(m, want) {
		t.Errorf("Create: %+v", m)
	}
	is := got["Tool.InputSchema"]
	if is.Members["type"].Type != "'object';" || !is.Members["properties"].Optional || len(is.Members) != 2 {
		t.Errorf("Tool.InputSchema: %+v", is)
	}
}
