//! What a case is about: which of the options it sets are its subject (the `subject` key;
//! default: every one it sets), and the case with an incidental option left out, for a way
//! through that cannot carry it.

use toml::Spanned;

use super::file::{Case, CaseFile, ResultContent};
use super::option::CaseOption;
use crate::located::Located;
use crate::model::StrictPolicy;

/// Whether `case` (its tools read) sets `option`.
fn set_in(option: CaseOption, case: &Case) -> bool {
    let file = &case.file;
    let results = || file.rounds.iter().flat_map(|r| &r.results);
    match option {
        CaseOption::Parallel => file.parallel.is_some(),
        CaseOption::MaxTokens => file.max_tokens.is_some(),
        CaseOption::Thinking => file.thinking.is_some(),
        CaseOption::Strict => {
            file.strict != StrictPolicy::Auto || case.tools.iter().any(|t| t.strict == Some(true))
        }
        CaseOption::Hosted => !file.hosted.is_empty(),
        CaseOption::CallerTools => !file.caller_tools.is_empty(),
        CaseOption::ContinueWith => file.continue_with.is_some(),
        CaseOption::ResultParts => results().any(|r| matches!(r.content, ResultContent::Parts(_))),
        CaseOption::ToolSet => file.rounds.iter().any(|r| r.changes_tools()),
        CaseOption::ProviderSwitch => file.rounds.iter().any(|r| r.provider.is_some()),
        CaseOption::EagerInputStreaming => case.tools.iter().any(|t| t.eager_input_streaming),
    }
}

/// `file` with `option` left out (only for [`CaseOption::LEFT_OUT_ABLE`]).
fn leave_out(option: CaseOption, file: &mut CaseFile) {
    match option {
        CaseOption::Parallel => file.parallel = None,
        CaseOption::MaxTokens => file.max_tokens = None,
        _ => {}
    }
}

impl Case {
    /// The options this case sets, in [`CaseOption::ALL`]'s order.
    pub fn options(&self) -> Vec<CaseOption> {
        (CaseOption::ALL.into_iter())
            .filter(|o| set_in(*o, self))
            .collect()
    }

    /// What the case is about: the options its `subject` lists, else every option it sets.
    pub fn subject(&self) -> Vec<CaseOption> {
        match &self.file.subject {
            Some(listed) => listed.iter().map(|o| *o.get_ref()).collect(),
            None => self.options(),
        }
    }

    /// Whether a trial of this case can run without `option`: the case sets it, it is not the
    /// case's subject, and a request can leave it out.
    pub fn incidental(&self, option: CaseOption) -> bool {
        CaseOption::LEFT_OUT_ABLE.contains(&option)
            && set_in(option, self)
            && !self.subject().contains(&option)
    }

    /// This case with `options` left out (each incidental): the same name, tools and trials.
    pub fn without(&self, options: &[CaseOption]) -> Case {
        let mut case = self.clone();
        for o in options {
            leave_out(*o, &mut case.file);
        }
        case
    }
}

/// Checks a case's `subject`: each option listed is one the case sets, listed once, and every
/// option it sets but does not list is one a trial can run without.
pub(super) fn check(case: &Case, err: impl Fn(usize, String) -> Located) -> Result<(), Located> {
    let Some(listed) = &case.file.subject else {
        return Ok(());
    };
    let set = case.options();
    let mut seen = Vec::new();
    for o in listed {
        let option = *o.get_ref();
        if !set.contains(&option) {
            let msg = format!(
                "`subject` lists `{option}`, which this case does not set: remove it (the case sets {})",
                names(&set)
            );
            return Err(err(o.span().start, msg));
        }
        if seen.contains(&option) {
            return Err(err(
                o.span().start,
                format!("`subject` lists `{option}` twice: remove the repeat"),
            ));
        }
        seen.push(option);
    }
    let first = |listed: &[Spanned<CaseOption>]| listed.first().map_or(0, |o| o.span().start);
    match set
        .iter()
        .find(|o| !seen.contains(o) && !CaseOption::LEFT_OUT_ABLE.contains(o))
    {
        Some(o) => Err(err(
            first(listed),
            format!(
                "`subject` leaves out `{o}`, which no trial can run without (only {} can be left out): add `{o}` to `subject`",
                names(&CaseOption::LEFT_OUT_ABLE)
            ),
        )),
        None => Ok(()),
    }
}

fn names(options: &[CaseOption]) -> String {
    if options.is_empty() {
        return "no option".into();
    }
    let quoted: Vec<String> = options.iter().map(|o| format!("`{o}`")).collect();
    quoted.join(", ")
}
