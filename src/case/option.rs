//! The options a case can set beside its tools, messages and tool choices (`parallel`,
//! `thinking`, `hosted`, …): the words of a case's `subject`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An option a case sets beside its tools, messages and tool choices. A trial's tool choice is
/// always its subject (each choice is a trial of its own), so it is not among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseOption {
    /// `parallel`: the parallel-calls switch.
    Parallel,
    /// `max_tokens`: the output-token limit.
    MaxTokens,
    /// `thinking`: the extended-thinking budget.
    Thinking,
    /// `strict` other than `auto`, or a tool's own `strict = true`.
    Strict,
    /// `hosted`: server-side tools.
    Hosted,
    /// `caller_tools`: tools only the caller's wire form carries.
    CallerTools,
    /// `continue_with`: how a Responses caller continues its rounds.
    ContinueWith,
    /// A round result written as parts (`rounds[].results[].content` an array).
    ResultParts,
    /// A round that changes the tools in force (`add_tools`, `remove_tools`).
    ToolSet,
    /// A round on another provider (`rounds[].provider`).
    ProviderSwitch,
    /// A tool whose arguments stream eagerly (`eager_input_streaming` in its file).
    EagerInputStreaming,
}

impl CaseOption {
    pub const ALL: [CaseOption; 11] = [
        CaseOption::Parallel,
        CaseOption::MaxTokens,
        CaseOption::Thinking,
        CaseOption::Strict,
        CaseOption::Hosted,
        CaseOption::CallerTools,
        CaseOption::ContinueWith,
        CaseOption::ResultParts,
        CaseOption::ToolSet,
        CaseOption::ProviderSwitch,
        CaseOption::EagerInputStreaming,
    ];

    /// The options a trial can run without, the request then leaving the field out (the API's
    /// default applies). Without any other the trial would be another case.
    pub const LEFT_OUT_ABLE: [CaseOption; 2] = [CaseOption::Parallel, CaseOption::MaxTokens];

    pub fn slug(self) -> &'static str {
        match self {
            CaseOption::Parallel => "parallel",
            CaseOption::MaxTokens => "max_tokens",
            CaseOption::Thinking => "thinking",
            CaseOption::Strict => "strict",
            CaseOption::Hosted => "hosted",
            CaseOption::CallerTools => "caller_tools",
            CaseOption::ContinueWith => "continue_with",
            CaseOption::ResultParts => "result_parts",
            CaseOption::ToolSet => "tool_set",
            CaseOption::ProviderSwitch => "provider_switch",
            CaseOption::EagerInputStreaming => "eager_input_streaming",
        }
    }
}

impl fmt::Display for CaseOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.slug())
    }
}
