//! `tooltape init client`: a commented client-library profile skeleton (driver, routes, known
//! failures) for a team's own SDK or agent framework, and with `--language`, a driver skeleton
//! in Python or JavaScript that uses tooltape's driver helper (`tooltape_driver`).

/// The language of a driver skeleton.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Python,
    Node,
}

impl Language {
    /// `python` or `node`.
    pub fn named(s: &str) -> Option<Language> {
        match s {
            "python" => Some(Language::Python),
            "node" => Some(Language::Node),
            _ => None,
        }
    }

    /// The driver's file name (`driver.py`, `driver.mjs`) and its skeleton.
    pub fn driver(self, name: &str) -> (&'static str, String) {
        let (file, text) = match self {
            Language::Python => ("driver.py", PYTHON_DRIVER),
            Language::Node => ("driver.mjs", NODE_DRIVER),
        };
        (file, text.replace("@NAME@", name))
    }

    /// The profile's `[driver]` lines for a driver at `path` (as the command names it).
    fn driver_table(self, path: &str) -> String {
        match self {
            Language::Python => format!(
                "command = [\"python3\", \"{path}\"]\n# The driver helper `tooltape_driver` (the tooltape wheel installs it; this names the copy\n# tooltape writes out, for an interpreter without the wheel, such as your library's venv:\n# \"{{{{dir}}}}/venv/bin/python\" with an [install] above).\nenv = {{ PYTHONPATH = \"{{{{shipped}}}}/clients/python\" }}\n"
            ),
            Language::Node => format!(
                "command = [\"node\", \"{path}\"]\n# The driver helper `tooltape-driver` (clients/node, npm-packable): the copy tooltape writes\n# out, unless your package depends on it. `{{{{dir}}}}` is where your library's node_modules are.\nenv = {{ TOOLTAPE_DRIVER_JS = \"{{{{shipped}}}}/clients/node/tooltape_driver.mjs\", TOOLTAPE_CLIENT_DIR = \"{{{{dir}}}}\" }}\n"
            ),
        }
    }
}

/// The profile skeleton for library `name` (run as `tooltape client PROFILE`). It loads as it
/// is: the driver is tooltape's reference driver until the team writes its own, or with
/// `driver` (its language and the path the command names it by), the skeleton driver
/// [`Language::driver`] writes.
pub fn skeleton(name: &str, profile: &str, driver: Option<(Language, &str)>) -> String {
    let mut text = TEMPLATE.to_string();
    if let Some((language, path)) = driver {
        let start = text.find(REFERENCE_DRIVER).expect("in the template");
        let end = start + REFERENCE_DRIVER.len();
        text.replace_range(start..end, &language.driver_table(path));
    }
    text.replace("@NAME@", name).replace("@PROFILE@", profile)
}

/// The template's `[driver]` command lines that a language's driver replaces.
const REFERENCE_DRIVER: &str = "command = [\"{{tooltape}}\", \"client\", \"drive\"]\n# command = [\"{{dir}}/venv/bin/python\", \"{{root}}/clients/@NAME@/driver.py\"]\n";

const PYTHON_DRIVER: &str = r#""""tooltape driver for @NAME@ (written by `tooltape init client --language python`).

tooltape sends one trial per line on stdin; `td.serve(call)` runs the protocol and calls `call`
for each round (docs/clients/README.md, "Write a driver in an afternoon"). Replace the body of
`call` with your library's calls, made as its documentation shows its users, the same code for
every provider it supports; return what the library handed back as the result document (the
helpers `td.chat_message_result`, `td.responses_result` read OpenAI-shaped objects), or raise
`td.Unsupported([...])` for trial fields your library has no way to express. "Not expressible"
is a claim about your library: `UNSUPPORTED` cites, for each entry, where its documentation (or
source, at the pinned version) says so; an entry cited nowhere is an error the suite shows.

Until then it calls the Chat Completions API over HTTP with the standard library, so the
profile runs as written. `tooltape_driver` is tooltape's driver helper (the wheel installs it;
the profile's PYTHONPATH names the copy tooltape writes out)."""

import json
import urllib.request

import tooltape_driver as td


# Each `unsupported` entry's citation: your library's documentation URL (or source file and
# symbol) at the pinned version, and a line of what it says.
UNSUPPORTED = {
    "api": "this skeleton calls Chat Completions only (cite where your library documents the APIs it speaks)",
    "stream": "this skeleton does not stream (cite where your library documents its streaming)",
    "thinking": "this skeleton sends no thinking budget (cite where your library documents it, or pass it)",
    "hosted": "this skeleton declares no hosted tools (cite where your library documents it, or pass it)",
    "result_parts": "this skeleton sends tool results as text only (cite where your library documents it, or pass it)",
    "continue_with": "this skeleton sends the whole conversation every round (cite where your library documents it, or pass it)",
    "caller_tools": "this skeleton declares no tools of the caller's own wire form (cite where your library documents it, or pass it)",
    "round_routes": "this skeleton continues no conversation on another provider (cite where your library documents it, or pass it)",
    "compaction": "this skeleton asks for no server-side compaction (cite where your library documents it, or pass it)",
    "eager_input_streaming": "this skeleton sends no fine-grained tool streaming switch (cite where your library documents it, or pass it)",
    "defer_loading": "this skeleton declares no deferred tools (cite where your library documents it, or pass it)",
    "namespace": "this skeleton declares no tool namespaces (cite where your library documents it, or pass it)",
    "allowed_callers": "this skeleton declares no tools for programmatic calls (cite where your library documents it, or pass it)",
}


def call(trial, messages):
    if trial["api"] != "openai-chat":
        raise td.Unsupported(["api"])
    if trial["stream"]:
        raise td.Unsupported(["stream"])
    body = dict(model=trial["model"], messages=td.chat_messages(messages), **td.chat_kwargs(trial))
    request = urllib.request.Request(
        trial["base_url"] + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer " + trial["api_key"]},
    )
    with urllib.request.urlopen(request, timeout=60) as r:
        doc = json.load(r)
    choice = doc["choices"][0]
    return td.chat_message_result(choice["message"], choice["finish_reason"], doc.get("usage"))


if __name__ == "__main__":
    td.serve(call, unsupported=UNSUPPORTED)
"#;

const NODE_DRIVER: &str = r#"// tooltape driver for @NAME@ (written by `tooltape init client --language node`).
//
// tooltape sends one trial per line on stdin; `serve(call)` runs the protocol and calls `call` for
// each round (docs/clients/README.md, "Write a driver in an afternoon"). Replace the body of
// `call` with your library's calls, made as its documentation shows its users, the same code for
// every provider it supports; return what the library handed back as the result document
// ({calls, text, finish, usage, chunks}), or throw `new Unsupported([...])` for trial fields your
// library has no way to express: "not expressible" is a claim about your library, so `UNSUPPORTED`
// cites, for each entry, where its documentation (or source, at the pinned version) says so (an
// entry cited nowhere is an error the suite shows). Your library: import it from $TOOLTAPE_CLIENT_DIR's
// node_modules with the helper's `importInstalled` (`requireInstalled` for CommonJS), as
// clients/vercel-ai/driver.mjs does.
//
// Until then it calls the Chat Completions API with fetch, so the profile runs as written.
// `tooltape-driver` is tooltape's driver helper (clients/node, npm-packable); the profile's
// TOOLTAPE_DRIVER_JS names the copy tooltape writes out.
import { pathToFileURL } from "node:url";

const helper = process.env.TOOLTAPE_DRIVER_JS;
const { serve, Unsupported } = await import(helper ? pathToFileURL(helper).href : "tooltape-driver");

// Each `unsupported` entry's citation: your library's documentation URL (or source file and
// symbol) at the pinned version, and a line of what it says.
const UNSUPPORTED = {
  api: "this skeleton calls Chat Completions only (cite where your library documents the APIs it speaks)",
  stream: "this skeleton does not stream (cite where your library documents its streaming)",
  tool_choice: "this skeleton sends no allowed-tools choice (cite where your library documents its tool_choice)",
  thinking: "this skeleton sends no thinking budget (cite where your library documents it, or pass it)",
  hosted: "this skeleton declares no hosted tools (cite where your library documents it, or pass it)",
  result_parts: "this skeleton sends tool results as text only (cite where your library documents it, or pass it)",
  continue_with: "this skeleton sends the whole conversation every round (cite where your library documents it, or pass it)",
  caller_tools: "this skeleton declares no tools of the caller's own wire form (cite where your library documents it, or pass it)",
  round_routes: "this skeleton continues no conversation on another provider (cite where your library documents it, or pass it)",
  compaction: "this skeleton asks for no server-side compaction (cite where your library documents it, or pass it)",
  eager_input_streaming: "this skeleton sends no fine-grained tool streaming switch (cite where your library documents it, or pass it)",
  defer_loading: "this skeleton declares no deferred tools (cite where your library documents it, or pass it)",
  namespace: "this skeleton declares no tool namespaces (cite where your library documents it, or pass it)",
  allowed_callers: "this skeleton declares no tools for programmatic calls (cite where your library documents it, or pass it)",
};

async function call(trial, messages) {
  if (trial.api !== "openai-chat") throw new Unsupported(["api"]);
  if (trial.stream) throw new Unsupported(["stream"]);
  const body = { model: trial.model, messages: chatMessages(messages) };
  if (trial.tools.length) {
    body.tools = trial.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description ?? undefined, parameters: t.parameters },
    }));
  }
  const choice = trial.tool_choice;
  if (typeof choice === "string") body.tool_choice = choice;
  else if (choice?.name) body.tool_choice = { type: "function", function: { name: choice.name } };
  else if (choice != null) throw new Unsupported(["tool_choice"]);
  if (trial.max_tokens != null) body.max_tokens = trial.max_tokens;
  if (trial.parallel_tool_calls != null) body.parallel_tool_calls = trial.parallel_tool_calls;
  const r = await fetch(`${trial.base_url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${trial.api_key}` },
    body: JSON.stringify(body),
  });
  const doc = await r.json();
  if (!r.ok) throw Object.assign(new Error(JSON.stringify(doc)), { statusCode: r.status });
  const { message, finish_reason } = doc.choices[0];
  return {
    calls: (message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
    text: message.content ?? null,
    finish: finish_reason ?? null,
    usage: doc.usage ? { input_tokens: doc.usage.prompt_tokens, output_tokens: doc.usage.completion_tokens } : null,
  };
}

/** The protocol's messages as Chat messages. */
function chatMessages(messages) {
  return messages.map((m) => {
    if (m.role === "tool") return { role: "tool", tool_call_id: m.call_id, content: m.content ?? "" };
    if (m.role !== "assistant") return { role: m.role, content: m.content ?? "" };
    const out = { role: "assistant", content: m.content ?? null };
    if (m.tool_calls?.length) {
      out.tool_calls = m.tool_calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) },
      }));
    }
    return out;
  });
}

await serve(call, { unsupported: UNSUPPORTED });
"#;

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
model = "gemini-3.8-flash"

# Known failures: what the library gets wrong for now. `trials` is a pattern over
# `case::route::choice::mode` (`*` matches any part); one that starts passing fails until its
# entry is removed. `flaky = true`: it fails only sometimes.
# [[known_failure]]
# trials = "parallel::anthropic::*::stream"
# reason = "streamed parallel tool_use blocks are merged into one call (tracker issue 123)"
"#;
