package mcptools

// schema is a JSON Schema object, built by the helpers below.
type schema map[string]any

// object is an object schema; strict objects refuse unknown properties
// (the REST write endpoints refuse unknown fields too).
func object(strict bool, required []string, props map[string]schema) schema {
	s := schema{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	if strict {
		s["additionalProperties"] = false
	}
	return s
}

func str(desc string, minLen, maxLen int) schema {
	s := schema{"type": "string", "description": desc}
	if minLen > 0 {
		s["minLength"] = minLen
	}
	if maxLen > 0 {
		s["maxLength"] = maxLen
	}
	return s
}

// nullableStr is a string that may also be null.
func nullableStr(desc string, maxLen int) schema {
	s := str(desc, 0, maxLen)
	s["type"] = []string{"string", "null"}
	return s
}

func enum(desc, def string, values ...string) schema {
	return schema{"type": "string", "description": desc, "enum": values, "default": def}
}

func integer(desc string, minimum, maximum, def int) schema {
	return schema{"type": "integer", "description": desc, "minimum": minimum, "maximum": maximum, "default": def}
}

func number(desc string, minimum, maximum float64, def any) schema {
	s := schema{"type": "number", "description": desc, "minimum": minimum, "maximum": maximum}
	if def != nil {
		s["default"] = def
	}
	return s
}

func boolean(desc string, def bool) schema {
	return schema{"type": "boolean", "description": desc, "default": def}
}

func strList(desc string, minItems, maxItems, itemMax int) schema {
	item := schema{"type": "string"}
	if itemMax > 0 {
		item["maxLength"] = itemMax
	}
	s := schema{"type": "array", "description": desc, "items": item}
	if minItems > 0 {
		s["minItems"] = minItems
	}
	if maxItems > 0 {
		s["maxItems"] = maxItems
	}
	return s
}

func uuids(desc string, minItems, maxItems int) schema {
	s := strList(desc, minItems, maxItems, 0)
	s["items"] = schema{"type": "string", "format": "uuid"}
	return s
}

func metadata() schema {
	return schema{"type": "object", "description": "Free-form JSON object, at most 65,536 bytes serialized."}
}
