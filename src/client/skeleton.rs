//! `tooltape init client`: a commented client-library profile skeleton (driver, routes, known
//! failures) for a team's own SDK or agent framework.

/// The profile skeleton for library `name` (run as `tooltape client PROFILE`). It loads as it
/// is: the driver is tooltape's reference driver until the team writes its own.
pub fn skeleton(name: &str, profile: &str) -> String {
    TEMPLATE
        .replace("@NAME@", name)
        .replace("@PROFILE@", profile)
}

const TEMPLATE: &str = r#"# Client profile for `@NAME@`: how tooltape tests your client library (an SDK, an agent
# framework) as a black box. tooltape is the provider behind it (a recording upstream that
# answers like each API) and the caller: a driver, a small program in your library's language,
# reads one trial per line on stdin (tools, messages, tool_choice, the upstream's base URL),
# calls your library, and writes what the library gave back as one JSON line on stdout.
# `tooltape client drive` is the reference driver (tooltape's own codecs as the library): start
# from it, then point `[driver] command` at yours.
#
# Run:  tooltape client @PROFILE@            (exit 0 pass, 1 findings beyond the known
#                                              failures, 2 a broken run; --format junit for CI)

# One sentence: which library, which version, in which language.
description = "@NAME@: our client library (say which version and language)"

# Where the library's bugs are filed (the known failures' reasons cite it).
# tracker = "https://example.com/our-sdk/issues"

# Optional: install the pinned library once into ~/.cache/tooltape/clients/… (`{{dir}}`).
# version = "1.2.3"
# [install]
# check = "venv/bin/python"
# command = "python3 -m venv venv && venv/bin/pip install 'our-sdk==1.2.3'"

# The driver: program and arguments. `{{dir}}` is the install folder, `{{root}}` the project
# root (--root), `{{tooltape}}` the running tooltape binary.
[driver]
command = ["{{tooltape}}", "client", "drive"]
# command = ["{{dir}}/venv/bin/python", "{{root}}/clients/@NAME@/driver.py"]
# env = { OUR_SDK_TELEMETRY = "off" }
# timeout_secs = 60

# Routes: one per wire format the library speaks (`api`: openai-chat, openai-responses,
# anthropic, gemini, text-protocol), with the model the caller names. `name` tells apart two
# routes to one API; `options` are handed to the driver with every trial.
[[routes]]
api = "openai-chat"
model = "gpt-4.1-mini"

[[routes]]
api = "openai-responses"
model = "gpt-4.1-mini"

[[routes]]
api = "anthropic"
model = "claude-haiku-4-5"

[[routes]]
api = "gemini"
model = "gemini-2.5-flash"

# Known failures: what the library gets wrong for now. `trials` is a pattern over
# `case::route::choice::mode` (`*` matches any part); one that starts passing fails until its
# entry is removed. `flaky = true`: it fails only sometimes.
# [[known_failure]]
# trials = "parallel::anthropic::*::stream"
# reason = "streamed parallel tool_use blocks are merged into one call (tracker issue 123)"
"#;
