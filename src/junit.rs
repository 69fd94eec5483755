//! JUnit XML, the report CI systems read: one `<testsuite>` of `<testcase>`s, each passed,
//! failed, broken (`<error>`) or skipped with its reason, and the counts on both suite elements.
//! Knows nothing of trials: each mode (gateway, client) maps its own records to [`JunitCase`].

use std::fmt::Write as _;
use std::time::Duration;

/// One test case of the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JunitCase {
    /// Where CI systems group the case (`litellm.weather`).
    pub(crate) classname: String,
    pub(crate) name: String,
    pub(crate) time: Duration,
    pub(crate) outcome: JunitOutcome,
}

/// How a case ended. `message` is one line; `detail` the element's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum JunitOutcome {
    Passed,
    /// A finding: the system under test did something wrong.
    Failed {
        message: String,
        detail: String,
    },
    /// The case could not run (`<error>`).
    Broken {
        message: String,
        detail: String,
    },
    /// Expected and not judged a pass: a known failure, not applicable (the reason).
    Skipped {
        message: String,
    },
}

/// The report of `cases` as one suite named `suite`, timestamped `timestamp` (ISO 8601).
pub(crate) fn junit(suite: &str, timestamp: &str, cases: &[JunitCase]) -> String {
    let count = |f: fn(&JunitOutcome) -> bool| cases.iter().filter(|c| f(&c.outcome)).count();
    let failures = count(|o| matches!(o, JunitOutcome::Failed { .. }));
    let errors = count(|o| matches!(o, JunitOutcome::Broken { .. }));
    let skipped = count(|o| matches!(o, JunitOutcome::Skipped { .. }));
    let time: f64 = cases.iter().map(|c| c.time.as_secs_f64()).sum();
    let counts = format!(
        r#"tests="{}" failures="{failures}" errors="{errors}" skipped="{skipped}" time="{time:.3}""#,
        cases.len()
    );
    let suite = attr(suite);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(out, r#"<testsuites name="{suite}" {counts}>"#);
    let _ = writeln!(
        out,
        r#"  <testsuite name="{suite}" {counts} timestamp="{}">"#,
        attr(timestamp)
    );
    for c in cases {
        let _ = write!(
            out,
            r#"    <testcase classname="{}" name="{}" time="{:.3}""#,
            attr(&c.classname),
            attr(&c.name),
            c.time.as_secs_f64()
        );
        match &c.outcome {
            JunitOutcome::Passed => out.push_str("/>\n"),
            JunitOutcome::Skipped { message } => {
                let _ = writeln!(
                    out,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                    attr(message)
                );
            }
            JunitOutcome::Failed { message, detail } | JunitOutcome::Broken { message, detail } => {
                let tag = if matches!(c.outcome, JunitOutcome::Failed { .. }) {
                    "failure"
                } else {
                    "error"
                };
                let _ = writeln!(
                    out,
                    ">\n      <{tag} message=\"{}\">{}</{tag}>\n    </testcase>",
                    attr(message),
                    text(detail)
                );
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// A character XML 1.0 cannot carry at all (most C0 controls, U+FFFE, U+FFFF): shown as `\u{…}`.
fn unrepresentable(c: char) -> bool {
    (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
}

fn escape(s: &str, in_attribute: bool) -> String {
    crate::text::markup_escape(s, |c, out| {
        match c {
            '"' if in_attribute => out.push_str("&quot;"),
            // Attribute values normalize raw whitespace to spaces: keep line breaks as written.
            '\n' if in_attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            c if unrepresentable(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            _ => return false,
        }
        true
    })
}

fn attr(s: &str) -> String {
    escape(s, true)
}

fn text(s: &str) -> String {
    escape(s, false)
}

#[cfg(test)]
mod tests;
