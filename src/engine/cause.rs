//! A failing trial's root cause: the finding that fails it (its side, kind and detail with tool
//! and case names, ids (made-up ones too: UUIDs), numbers and quoted text abstracted), with a
//! stable id, so that one bug met on many routes, choices and modes is one cause (`reproduce`
//! groups a run's trials by it).

use super::finding::{Finding, FindingKind, Side};
use super::trial::SystemKind;
use crate::model::Severity;

/// What a failing trial's root cause is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CauseKey {
    pub side: CauseSide,
    pub kind: CauseKind,
    /// The finding's message, normalized.
    pub detail: String,
}

/// Where a root cause is: the end of the system its finding is about, or the system itself
/// (of its kind) when it broke the trial before any check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CauseSide {
    Finding(Side),
    System(SystemKind),
}

impl std::fmt::Display for CauseSide {
    /// `upstream`, `downstream`, `gateway` or `client`: part of the cause's id.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CauseSide::Finding(side) => side.fmt(f),
            CauseSide::System(kind) => f.write_str(kind.slug()),
        }
    }
}

/// What a root cause is: the kind of its finding, or a trial the system broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CauseKind {
    Finding(FindingKind),
    Broken,
}

impl CauseKind {
    /// The finding kind's slug (`FindingKind::slug`), or `broken`: the id's prefix.
    pub fn slug(self) -> &'static str {
        match self {
            CauseKind::Finding(kind) => kind.slug(),
            CauseKind::Broken => "broken",
        }
    }
}

impl std::fmt::Display for CauseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.slug())
    }
}

impl CauseKey {
    /// `KIND-xxxxxxxx`: the kind and 32 bits of the FNV-1a hash of side, kind and detail.
    pub fn id(&self) -> String {
        let h =
            crate::fnv::fnv1a(format!("{}|{}|{}", self.side, self.kind, self.detail).as_bytes());
        format!("{}-{:08x}", self.kind, h & 0xffff_ffff)
    }

    /// One line: `side: detail`.
    pub fn title(&self) -> String {
        format!("{}: {}", self.side, self.detail)
    }
}

/// How a trial ended, as far as its cause goes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ended<'a> {
    /// Its findings failed it.
    Failed,
    /// The system (of that kind) broke it before any check (the cell's message).
    Broken(SystemKind, &'a str),
    /// Passed, or an expected cell: no cause.
    Other,
}

/// The cause of a failed trial: the finding its cell reports (the first that is not cosmetic;
/// findings are sorted most severe first), or a broken trial's own message. A failure that is
/// no finding (a known failure that now passes) has none.
pub(super) fn key_of(
    ended: Ended<'_>,
    findings: &[Finding],
    tools: &[String],
    case: &str,
) -> Option<CauseKey> {
    match ended {
        Ended::Failed => findings
            .iter()
            .find(|f| f.severity != Severity::Cosmetic)
            .map(|f| CauseKey {
                side: CauseSide::Finding(f.side),
                kind: CauseKind::Finding(f.kind),
                detail: normalize(&f.message, tools, case),
            }),
        Ended::Broken(kind, m) => Some(CauseKey {
            side: CauseSide::System(kind),
            kind: CauseKind::Broken,
            detail: normalize(m, tools, case),
        }),
        Ended::Other => None,
    }
}

/// Whether `c` can be part of a name (tool, id, number).
fn word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Replaces whole-word occurrences of `name` in `s` with `with`; `joins` are characters that
/// also continue a word (a case name inside a choice slug such as `allowed-auto` stays).
fn replace_word(s: &str, name: &str, with: &str, joins: &[char]) -> String {
    let word = |c: char| word(c) || joins.contains(&c);
    if name.is_empty() {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(name) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + name.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_none_or(|c| !word(c)) && after.is_none_or(|c| !word(c)) {
            out.push_str(with);
        } else {
            out.push_str(name);
        }
        rest = &rest[i + name.len()..];
    }
    out.push_str(rest);
    out
}

/// Collapses the text between `open` and its matching `close` to `…` (`[]` and `{}` stay
/// empty, a list of calls `[TOOL]` / `[TOOL, …]` stays); an unclosed span (a clipped message)
/// is collapsed to the end.
fn collapse(s: &str, open: char, close: char) -> String {
    let calls = ["TOOL", "TOOL, …"];
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    let mut inner = String::new();
    let end = |out: &mut String, inner: &str| {
        if calls.contains(&inner) {
            out.push_str(inner);
        } else if !inner.is_empty() {
            out.push('…');
        }
        out.push(close);
    };
    for c in s.chars() {
        if c == open {
            if depth == 0 {
                out.push(c);
                inner.clear();
            } else {
                inner.push(c);
            }
            depth += 1;
        } else if c == '…' && depth > 0 && inner != "TOOL, " {
            // A clipped message: the span ends where the clip did.
            inner.push(c);
            end(&mut out, "clipped");
            depth = 0;
        } else if c == close && depth > 0 {
            depth -= 1;
            if depth == 0 {
                end(&mut out, &inner);
            } else {
                inner.push(c);
            }
        } else if depth == 0 {
            out.push(c);
        } else {
            inner.push(c);
        }
    }
    if depth > 0 && !inner.is_empty() {
        out.push('…');
    }
    out
}

/// Collapses quoted text: `"…"` always, `'…'` when the quote opens after a non-word character
/// (so that `gateway's` stays).
fn unquote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut quote: Option<char> = None;
    let mut prev: Option<char> = None;
    let mut escaped = false;
    for c in s.chars() {
        if quote.is_some() && (escaped || c == '\\') {
            // `\"` inside a quote (a Debug-printed string) does not end it.
            escaped = !escaped && c == '\\';
            prev = Some(c);
            continue;
        }
        match quote {
            Some(q) if c == q => {
                out.push('…');
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None if c == '"' || (c == '\'' && prev.is_none_or(|p| !word(p))) => {
                out.push(c);
                quote = Some(c);
            }
            None => out.push(c),
        }
        prev = Some(c);
    }
    if quote.is_some() {
        out.push('…');
    }
    out
}

/// The prefixes of the ids APIs, libraries and gateways make up for calls, items and responses
/// (OpenAI's `call_`, `fc_`, `rs_`, `resp_`, `ws_`, `ctc_`, `msg_`; Anthropic's `toolu_`,
/// `srvtoolu_`; pydantic-ai's `pyd_ai_`).
const ID_PREFIXES: [&str; 12] = [
    "call_",
    "toolu_",
    "srvtoolu_",
    "fc_",
    "call-",
    "item_",
    "msg_",
    "rs_",
    "resp_",
    "ws_",
    "ctc_",
    "pyd_ai_",
];

/// The length of a UUID (`8-4-4-4-12` hex digits) starting at `chars[i]` and ending at a word's
/// end, as libraries make up for calls without ids (LangChain's for Gemini's calls); or of 32 hex
/// digits with a letter among them, a UUID written without its dashes.
fn uuid_at(chars: &[char], i: usize) -> Option<usize> {
    let hex = |j: usize| chars.get(j).is_some_and(char::is_ascii_hexdigit);
    let ends = |j: usize| chars.get(j).is_none_or(|&c| !word(c) && c != '-');
    let mut j = i;
    for (n, group) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if n > 0 {
            if chars.get(j) != Some(&'-') {
                break;
            }
            j += 1;
        }
        if !(j..j + group).all(hex) {
            break;
        }
        j += group;
        if n == 4 && ends(j) {
            return Some(j - i);
        }
    }
    let plain = (i..i + 32).all(hex) && chars[i..i + 32].iter().any(char::is_ascii_alphabetic);
    (plain && ends(i + 32)).then_some(32)
}

/// Made-up ids (a UUID, or a word with an id prefix, its dashed tail included: `call_<uuid>`)
/// become `ID`; digit runs `N`, except HTTP statuses (three digits from 100 to 599), which tell
/// causes apart.
fn abstract_tokens(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if word(c) && (i == 0 || !word(chars[i - 1])) {
            if let Some(n) = uuid_at(&chars, i) {
                out.push_str("ID");
                i += n;
                continue;
            }
            let mut end = (i..chars.len())
                .find(|&j| !word(chars[j]))
                .unwrap_or(chars.len());
            let token: String = chars[i..end].iter().collect();
            let id = (ID_PREFIXES.iter()).any(|p| token.starts_with(p) && token.len() > p.len());
            if id {
                // An id made of a prefix and a UUID goes on past the UUID's dashes.
                while chars.get(end) == Some(&'-') && chars.get(end + 1).is_some_and(|&c| word(c)) {
                    end = (end + 1..chars.len())
                        .find(|&j| !word(chars[j]))
                        .unwrap_or(chars.len());
                }
                out.push_str("ID");
            } else if token.chars().all(|c| c.is_ascii_digit()) {
                // A status follows the words that introduce one ("with 400", "answered 500",
                // "a success (200)"); a count of tokens or fragments does not.
                let before: String = chars[..i].iter().collect();
                let prev = before
                    .trim_end_matches([' ', '('])
                    .rsplit(' ')
                    .next()
                    .unwrap_or_default();
                let status = token.len() == 3
                    && ('1'..='5').contains(&chars[i])
                    && ["with", "answered", "upstream", "as", "success", "status"].contains(&prev);
                out.push_str(if status { &token } else { "N" });
            } else {
                let mut digits = false;
                for c in token.chars() {
                    if c.is_ascii_digit() {
                        if !digits {
                            out.push('N');
                        }
                        digits = true;
                    } else {
                        out.push(c);
                        digits = false;
                    }
                }
            }
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Lists of JSON pointers into a schema (`/properties/a/type, /$defs`) become `…`: which
/// keywords a schema lost varies with the case, the loss is one cause.
fn pointers(s: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for token in s.split(' ') {
        if token.starts_with('/') && token.len() > 1 {
            if out.last() != Some(&"…") {
                out.push("…");
            }
        } else {
            out.push(token);
        }
    }
    out.join(" ")
}

/// A finding's message with what varies between trials of one bug abstracted: tool names
/// (`TOOL`; a `+`-joined list of them once), the case name (`CASE`), quoted text, JSON objects
/// and lists (`…`), ids and numbers.
pub fn normalize(message: &str, tools: &[String], case: &str) -> String {
    let mut names: Vec<&String> = tools.iter().collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    // The first line: a traceback after it varies with the gateway's internals.
    let first = message.lines().next().unwrap_or_default();
    let mut s = unquote(&collapse(first, '{', '}'));
    s = pointers(&s);
    for n in names {
        s = replace_word(&s, n, "TOOL", &[]);
    }
    s = replace_word(&s, case, "CASE", &['-', '.', ':']);
    while s.contains("TOOL+TOOL") {
        s = s.replace("TOOL+TOOL", "TOOL");
    }
    // A list of calls keeps whether it had one or more: `[TOOL, …]` (fewer calls and more
    // calls are different causes; how many more is not).
    while s.contains("TOOL, TOOL") {
        s = s.replace("TOOL, TOOL", "TOOL, …");
    }
    while s.contains("…, TOOL") || s.contains("…, …") {
        s = s.replace("…, TOOL", "…").replace("…, …", "…");
    }
    s = collapse(&s, '[', ']');
    abstract_tokens(&s)
}

#[cfg(test)]
mod tests;
