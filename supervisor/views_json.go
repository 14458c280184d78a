package supervisor

import (
	"encoding/json"
	"reflect"
	"strings"
)

// MarshalJSON encodes the snapshot as one object: the summary's fields
// (SPEC §3, as list has them) and every other field of AgentInfo under its
// json tag, or its Go name when it has none. Fields added to AgentInfo
// travel to viewers (SPEC §9) without further code; a reader that does not
// know a field ignores it.
func (a AgentInfo) MarshalJSON() ([]byte, error) {
	sum, err := json.Marshal(summaryFields(a.Summary)) // the whole message, not cut
	if err != nil {
		return nil, err
	}
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(sum, &obj); err != nil {
		return nil, err
	}
	v := reflect.ValueOf(a)
	for _, f := range reflect.VisibleFields(v.Type()) {
		if f.Anonymous || len(f.Index) != 1 || !f.IsExported() {
			continue
		}
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		b, err := json.Marshal(v.FieldByIndex(f.Index).Interface())
		if err != nil {
			return nil, err
		}
		obj[name] = b
	}
	return json.Marshal(obj)
}

// UnmarshalJSON decodes what MarshalJSON encodes; unknown fields are
// ignored.
func (a *AgentInfo) UnmarshalJSON(b []byte) error {
	var sum summaryFields
	if err := json.Unmarshal(b, &sum); err != nil {
		return err
	}
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	*a = AgentInfo{Summary: Summary(sum)}
	v := reflect.ValueOf(a).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if f.Anonymous || len(f.Index) != 1 || !f.IsExported() {
			continue
		}
		name, ok := jsonName(f)
		raw, present := obj[name]
		if !ok || !present {
			continue
		}
		if err := json.Unmarshal(raw, v.FieldByIndex(f.Index).Addr().Interface()); err != nil {
			return err
		}
	}
	return nil
}

// jsonName is the key of field f: its json tag's name, else its Go name;
// ok is false for a field tagged "-".
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	return f.Name, true
}
