//! What a check finds: the end of the gateway it is about (`Side`), the check that made it
//! (`FindingKind`), and the `Finding` itself with its severity; the constructors the checks
//! share and `clip`, which shortens quoted values in messages.

use serde::Serialize;

use crate::model::Severity;

/// Which end of the gateway a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// What the gateway sent the provider.
    Upstream,
    /// What the gateway answered its client.
    Downstream,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Upstream => "upstream",
            Side::Downstream => "downstream",
        })
    }
}

/// Which check made a finding: findings are selected by kind, never by their text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// The request's translation: tools, schemas, tool_choice, strict, the parallel switch.
    Request,
    /// A tool result the gateway unlinked from its call, or dropped.
    ToolResult,
    /// The text protocol's injected instructions.
    Injected,
    /// The request went to another API than the route's.
    Route,
    /// Upstream refused the gateway's request.
    Refused,
    /// The answer the client got, against what upstream answered.
    Answer,
    /// The streamed answer's event shape.
    Stream,
    /// A request invalid in the client's own API, and the error it got.
    ClientFault,
    /// A follow-up round: nothing sent, or its answer.
    Round,
    /// Reasoning state upstream answered with its calls, not carried back on the next round.
    Reasoning,
    /// A call or result id invalid in the API that carries it.
    CallId,
    /// A tool the target cannot express (hosted search, a custom tool) dropped or sent as a
    /// function instead of refused.
    Unexpressible,
    /// A tool name over the target's limit sent, or a shortened name not restored.
    ToolName,
    /// Chat's streamed usage framed otherwise than documented (its own final chunk with
    /// `choices: []`, only when asked).
    UsageFraming,
    /// A round's tools sent upstream are not the tools in force for it (a tool put in force
    /// missing, or one taken out of force still sent).
    ToolSet,
    /// A tool result given as parts (text, images) JSON-quoted into a string, flattened to its
    /// text where the target carries parts, or a part dropped.
    NonTextResult,
    /// A round continued by `previous_response_id` reached upstream without its earlier context
    /// (and without an id upstream knows).
    ResponseContext,
    /// A model server's answer does not honour the caller's `tool_choice` (none, required, a
    /// named tool, an allowed subset) or its parallel switch off.
    ChoiceHonoured,
    /// A model server's call names a tool not in force, or its arguments are not a JSON object
    /// its tool's schema accepts.
    CallValid,
    /// Deferred tools, a tool search or a namespace lost on the way (classes 28, 29): a
    /// deferred tool sent loaded or dropped, the search dropped, the search the upstream ran
    /// handed to the client as its own call or dropped from the answer, a call's namespace lost.
    ToolSearch,
    /// The `phase` upstream answered an assistant message with (Responses), not sent back
    /// with that message on the next round.
    Phase,
    /// A compaction item upstream answered not sent back on the next round (the conversation
    /// it stands for dropped).
    Compaction,
    /// Programmatic tool calling lost on the way (class 30): the runner or a tool's
    /// `allowed_callers` dropped, a call the model's code made handed over or sent back without
    /// its caller, the runner's server call or Anthropic's container not carried back.
    Programmatic,
    /// A tool result's error flag lost on the way to a target that carries one (Anthropic's
    /// `is_error`, Gemini's `response.error`, the text protocol's `error="true"`).
    ErrorFlag,
    /// What a library did with the MCP server its tools came from (client mode's MCP routes): a
    /// result that did not come from the server's `tools/call`, a call the model did not make or
    /// made with other arguments, the tools not listed from it, a network `$ref` fetched.
    Mcp,
    /// A `<tool_call>` a model wrote on the text protocol that tooltape's parser did not hand
    /// over as a call (not JSON, no name, arguments not an object, a tool not in force, a
    /// schema it breaks, cut with no length finish): the model's words, or the parser's fault.
    TextCall,
}

impl FindingKind {
    /// The kind's name in root-cause ids and titles.
    pub fn slug(self) -> &'static str {
        match self {
            FindingKind::Request => "request",
            FindingKind::ToolResult => "tool-result",
            FindingKind::Injected => "injected",
            FindingKind::Route => "route",
            FindingKind::Refused => "refused",
            FindingKind::Answer => "answer",
            FindingKind::Stream => "stream",
            FindingKind::ClientFault => "client-fault",
            FindingKind::Round => "round",
            FindingKind::NonTextResult => "non-text-result",
            FindingKind::Reasoning => "reasoning",
            FindingKind::CallId => "call-id",
            FindingKind::Unexpressible => "unexpressible-tool",
            FindingKind::ToolName => "tool-name",
            FindingKind::UsageFraming => "usage-framing",
            FindingKind::ToolSet => "tool-set",
            FindingKind::ResponseContext => "response-context",
            FindingKind::ChoiceHonoured => "choice-honoured",
            FindingKind::CallValid => "call-valid",
            FindingKind::ToolSearch => "tool-search",
            FindingKind::Phase => "phase",
            FindingKind::Compaction => "compaction",
            FindingKind::Programmatic => "programmatic",
            FindingKind::ErrorFlag => "error-flag",
            FindingKind::Mcp => "mcp",
            FindingKind::TextCall => "text-call",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub side: Side,
    pub message: String,
    #[serde(skip)]
    pub kind: FindingKind,
}

impl Finding {
    pub(crate) fn new(
        kind: FindingKind,
        severity: Severity,
        side: Side,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity,
            side,
            message: message.into(),
            kind,
        }
    }
}

/// A finding of the request checks; the other checks retag theirs ([`of_kind`]).
pub(super) fn finding(severity: Severity, side: Side, message: impl Into<String>) -> Finding {
    Finding::new(FindingKind::Request, severity, side, message)
}

/// `findings`, each of `kind`.
pub(super) fn of_kind(kind: FindingKind, mut findings: Vec<Finding>) -> Vec<Finding> {
    for f in &mut findings {
        f.kind = kind;
    }
    findings
}

/// `s` cut to its first 80 characters, marked with `…` where cut.
pub(super) fn clip(s: &str) -> String {
    crate::text::clip(s, 80)
}
