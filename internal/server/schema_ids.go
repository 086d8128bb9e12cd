package server

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"strings"
)

// Output schemas that several tools share carry an "$id" naming their
// content, so that a client compiles each of them once.
//
// Why: the official TypeScript SDK client compiles a validator for every
// tool's outputSchema as soon as tools/list answers (Client.listTools →
// cacheToolMetadata → AjvJsonSchemaValidator.getValidator → ajv.compile),
// before it can offer any tool. ajv caches a compiled schema by object
// identity only, and every schema off the wire is a new object, so nine
// tools answering with the same pane object used to cost nine compilations.
// getValidator looks a schema with an $id up first (ajv.getSchema($id)) and
// compiles only an id it has not seen, so one id per distinct schema turns
// those nine into one. ajv's compilation costs about 25 µs per typed
// property and 110 µs per schema on a warm client (scripts/bench-peers,
// COLD_ONLY=1); with ~24 of 56 schemas identical to another tool's that was
// a third of the cold start through that client (issue 22 goal 4).
//
// The id is a digest of the schema's compact JSON, so equal ids always mean
// equal schemas: a client that keeps its validators across a reconnection to
// a newer server never validates against an older schema of the same name.
// Older TypeScript clients (SDK ≤ 1.20, on ajv 6) call ajv.compile
// directly; ajv 6 caches by the schema's serialized content before it looks
// at an id, so they compiled each distinct schema once already and still
// hold a validator for every tool (checked with SDK 1.20.0 against this
// server). Validators that do not cache (Python's jsonschema, the Go SDK)
// read an $id as the schema's base URI, which nothing here resolves against.
//
// Only schemas of resultIDMinBytes or more get an id: a smaller one compiles
// in about 0.1 ms, which is not worth 25 bytes of every tools/list on each
// tool sharing it, and the wrapped-string result keeps exactly the schema
// FastMCP gives it (TestStringToolsOutputSchema).

// resultIDPrefix starts every output schema id: an absolute URI of our own
// scheme, which no validator tries to fetch.
const resultIDPrefix = "tmux-mcp:"

// resultIDMinBytes is the smallest shared output schema, in compact JSON,
// that gets an id.
const resultIDMinBytes = 200

// resultSchemaID is the id of an output schema given as its compact JSON
// without an id (marshalJSON): 32 bits of its SHA-256, plenty to tell apart
// the few dozen schemas of any two versions.
func resultSchemaID(compact []byte) string {
	sum := sha256.Sum256(compact)
	return resultIDPrefix + hex.EncodeToString(sum[:4])
}

// sharedResultIDs returns, for the compact output schemas of every tool in
// the table (nil for a tool without one), the id of each schema that at
// least two tools share and that is at least resultIDMinBytes long, keyed
// by the schema's JSON.
func sharedResultIDs(outs [][]byte) map[string]string {
	count := map[string]int{}
	for _, o := range outs {
		if len(o) >= resultIDMinBytes {
			count[string(o)]++
		}
	}
	ids := map[string]string{}
	for o, n := range count {
		if n >= 2 {
			ids[o] = resultSchemaID([]byte(o))
		}
	}
	return ids
}

// withResultID returns a copy of an output schema with the given $id.
func withResultID(out map[string]any, id string) map[string]any {
	c := maps.Clone(out)
	c["$id"] = id
	return c
}

// generatedResultID is the $id of a tool's generated output schema, "" when
// it has none. The id leads the compact JSON ("$" sorts before every
// letter), so no parse is needed.
func generatedResultID(name string) string {
	_, out, ok := generatedSchemas(name)
	const key = `{"$id":"`
	if !ok || !strings.HasPrefix(out, key) {
		return ""
	}
	id, _, _ := strings.Cut(out[len(key):], `"`)
	return id
}

// reflectedResultID gives a reflected output schema the id its generated
// schema carries, so that both spell the tool's schema the same way. The
// id is checked against the reflected content: a generated file that no
// longer matches the code (which TestGeneratedSchemas catches) cannot make
// two different schemas share an id.
func reflectedResultID(name string, out map[string]any) map[string]any {
	id := generatedResultID(name)
	if id == "" || out == nil {
		return out
	}
	compact, err := marshalJSON(out)
	if err != nil || resultSchemaID(compact) != id {
		return out
	}
	return withResultID(out, id)
}
