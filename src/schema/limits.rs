//! OpenAI strict-mode size limits, counted in one pass alongside the rule checker.
//!
//! Counting rules (the docs do not define them; these are ours, documented here):
//! * nesting levels: object schemas on the path from the root, the root object being level 1
//!   (arrays, `anyOf` branches and nullable wrappers do not add a level); each `$defs` entry
//!   starts again at level 1 because its use sites are unknown (recursion is allowed anyway);
//! * properties: every key of every `properties` map, definitions included;
//! * enum values: every member of every `enum` (a `const` is not an enum);
//! * characters: property names + definition names + string enum members + string `const`
//!   values, counted in Unicode scalar values (`chars()`), not bytes;
//! * a "large" enum: one `enum` whose members are all strings and number more than 250.

use serde_json::Value;

use super::keywords::Keywords;
use super::prepared::Violation;
use super::util::Ptr;

pub(super) const MAX_DEPTH: usize = 10;
pub(super) const MAX_PROPERTIES: usize = 5000;
pub(super) const MAX_ENUM_VALUES: usize = 1000;
pub(super) const MAX_CHARS: usize = 120_000;
pub(super) const LARGE_ENUM_VALUES: usize = 250;
pub(super) const MAX_LARGE_ENUM_CHARS: usize = 15_000;

/// Running totals for one schema.
#[derive(Debug, Default)]
pub(super) struct Counter {
    properties: usize,
    enum_values: usize,
    chars: usize,
    /// First node found deeper than `MAX_DEPTH` object levels, with its level.
    too_deep: Option<(String, usize)>,
}

impl Counter {
    /// Counts one schema node (its scanned keywords) at `ptr`, which sits at `level` object
    /// levels (itself included when it is an object).
    pub(super) fn node(
        &mut self,
        kw: &Keywords<'_>,
        ptr: &Ptr<'_>,
        level: usize,
        out: &mut Vec<Violation>,
    ) {
        if level > MAX_DEPTH && self.too_deep.is_none() {
            self.too_deep = Some((ptr.render(), level));
        }
        if let Some(props) = kw.properties.and_then(Value::as_object) {
            self.properties += props.len();
            self.chars += props.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        for section in [kw.defs, kw.definitions] {
            if let Some(defs) = section.and_then(Value::as_object) {
                self.chars += defs.keys().map(|k| k.chars().count()).sum::<usize>();
            }
        }
        if let Some(Value::String(s)) = kw.const_ {
            self.chars += s.chars().count();
        }
        if let Some(members) = kw.enum_.and_then(Value::as_array) {
            self.enum_values += members.len();
            let mut all_strings = true;
            let mut len = 0usize;
            for m in members {
                match m.as_str() {
                    Some(s) => len += s.chars().count(),
                    None => all_strings = false,
                }
            }
            self.chars += len;
            if all_strings && members.len() > LARGE_ENUM_VALUES && len > MAX_LARGE_ENUM_CHARS {
                out.push(Violation::at(
                    ptr,
                    "max-large-enum-length",
                    format!(
                        "enum has {} string values totalling {len} characters; an enum with more than \
                         {LARGE_ENUM_VALUES} values may total at most {MAX_LARGE_ENUM_CHARS}",
                        members.len()
                    ),
                ));
            }
        }
    }

    /// Emits the request-total violations once the walk is done.
    pub(super) fn finish(self, out: &mut Vec<Violation>) {
        if let Some((ptr, level)) = self.too_deep {
            out.push(Violation::new(
                &ptr,
                "max-depth",
                format!(
                    "object nested {level} levels deep; at most {MAX_DEPTH} levels are allowed"
                ),
            ));
        }
        let totals = [
            Violation::total_over(self.properties, MAX_PROPERTIES, "max-properties", |n| {
                format!(
                    "schema has {n} object properties in total; at most {MAX_PROPERTIES} are allowed"
                )
            }),
            Violation::total_over(self.enum_values, MAX_ENUM_VALUES, "max-enum-values", |n| {
                format!(
                    "schema has {n} enum values in total; at most {MAX_ENUM_VALUES} are allowed"
                )
            }),
            Violation::total_over(self.chars, MAX_CHARS, "max-string-length", |n| {
                format!(
                    "property names, definition names, enum and const values total {n} characters; \
                     at most {MAX_CHARS} are allowed"
                )
            }),
        ];
        out.extend(totals.into_iter().flatten());
    }
}
