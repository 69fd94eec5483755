//! The one way tooltape compiles a tool's JSON Schema to validate with: a `$ref` to a network
//! document is never fetched (a schema is data, and a validator that dereferences it reaches
//! wherever the schema points: the MCP conformance suite's canary) and constrains nothing.

use serde_json::Value;

/// Resolves every external document to the schema that accepts anything, without IO.
struct Offline;

impl jsonschema::Retrieve for Offline {
    fn retrieve(
        &self,
        _: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Value::Bool(true))
    }
}

/// `schema` compiled; a reference to a network document accepts anything.
pub(crate) fn validator(
    schema: &Value,
) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options().with_retriever(Offline).build(schema)
}
