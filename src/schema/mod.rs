//! Tool parameter schemas per provider: the OpenAI strict transform, the checker with its
//! limits, the Anthropic strict subset and budgets, the Gemini sanitizer, the reverse mapping
//! of the nullable rewrite on decoded calls, and a schema read by meaning (`meaning`) for
//! comparing two by what they accept.
//!
//! Policy (per tool, [`prepare_tools`]):
//! * OpenAI Responses attempts strict for every tool unless the policy is `Off` or the tool
//!   says `strict: false`; Chat Completions only when the tool says `strict: true` or the
//!   policy is `Require`. `Off` still honours a tool's own `strict: true` (as the model's
//!   doc says) and then behaves like `Auto` for that tool.
//! * A schema that cannot be strict without changing what it accepts is never rewritten
//!   lossily: `Auto`/`Off` send the original with `strict: false` plus a note; `Require`
//!   fails with `STRICT_SCHEMA`.
//! * Anthropic strict is only attempted on `strict: true` tools or under `Require`; no
//!   nullable rewrite there (optional properties are allowed and unions are budgeted).
//! * Gemini has no strict flag: `parameters` when a meaning-preserving sanitize fits the
//!   OpenAPI subset and drops nothing the model reads, else `parametersJsonSchema`; no-arg
//!   tools omit parameters ([`PreparedTool::parameters`] is `Value::Null`).
//! * Annotations a dialect refuses (`default`, `examples`, a `format` outside its list…) are
//!   dropped, never silently: every transform returns them as [`Loss`]es, the encoders note
//!   them, `tooltape schema strict` prints them.
//!
//! Notes and errors show the root pointer as `(root)`.

mod anthropic;
mod check;
mod features;
mod gemini;
mod keywords;
mod limits;
mod local;
mod meaning;
mod openai;
mod prepare;
mod prepared;
mod restore;
mod stream_restore;
mod util;

#[cfg(test)]
mod tests;
mod validator;

pub(crate) use anthropic::{
    MAX_OPTIONAL_PARAMS, MAX_STRICT_TOOLS, MAX_UNION_PARAMS, budget as anthropic_budget,
};
pub use features::schema_features;
pub(crate) use meaning::{by_meaning, keyword_paths, proto_names};
pub use openai::{Transformed, transform as openai_transform};
pub(crate) use prepare::prepare_tools;
pub use prepare::{check, openai_strict, strict_parameters};
pub(crate) use prepared::PreparedTool;
pub use prepared::{Loss, Strict, Violation};
pub(crate) use restore::restore_optional;
#[cfg(test)]
use restore::restore_optional_with;
pub(crate) use stream_restore::{NullFilter, stream_filter};
pub(crate) use validator::validator;
