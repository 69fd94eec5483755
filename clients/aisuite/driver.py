"""tooltape driver for aisuite: `Client(provider_configs).chat.completions.create` with a
`provider:model` string, the OpenAI Chat shape in (tools as OpenAI-format JSON Schema dicts, its
documented manual tool calling) and out, the same code for every provider; each provider's
client configuration (base URL, key, no retries) in `provider_configs`. aisuite yields
OpenAI-shaped chunks and has no accumulation helper: a streamed result's calls are the chunks
gathered by index as its users do."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td
import aisuite


def client_of(trial):
    opts = trial.get("options") or {}
    provider, base = opts["provider"], trial["base_url"] + opts.get("base_suffix", "")
    config = {"api_key": trial["api_key"]}
    if provider == "gemini":
        config["http_options"] = {"base_url": base}
    else:
        config.update(base_url=base, max_retries=0)
    return provider, aisuite.Client({provider: config})


def call(trial, messages):
    provider, client = client_of(trial)
    kw = dict(model=provider + ":" + trial["model"], messages=td.chat_messages(messages), **td.chat_kwargs(trial))
    if not trial["stream"]:
        r = client.chat.completions.create(**kw)
        return td.chat_message_result(r.choices[0].message, r.choices[0].finish_reason, td.get(r, "usage"))
    chunks, text, finish, usage = [], "", None, None
    for chunk in client.chat.completions.create(stream=True, **kw):
        doc = td.chat_chunk(chunk)
        if doc:
            chunks.append(doc)
            text += doc.get("text", "")
            finish = doc.get("finish", finish)
        if td.get(chunk, "usage"):
            usage = td.chat_usage(chunk.usage)
    return {"calls": td.chat_gathered(chunks), "text": text or None, "finish": finish, "usage": usage, "chunks": chunks}


# Why each entry this driver answers `unsupported` for is not expressible through aisuite 0.2.0
# (its installed source: aisuite/). aisuite's one interface is OpenAI's Chat shape
# (`Client.chat.completions.create`); each provider module converts it.
UNSUPPORTED = {
    "allowed_callers": (
        "aisuite 0.2.0 names allowed_callers nowhere in aisuite/: its providers' convert_tool_spec writes name, description and"
        " parameters only (class 30)"
    ),
    "thinking": (
        "aisuite 0.2.0 aisuite/providers/anthropic_provider.py AnthropicMessageConverter.convert_response and gemini_provider.py "
        "parse_candidate keep text and tool calls only (no thinking blocks, no thought signatures) and the Chat-shaped message has no "
        "field to carry them back: the reasoning state cannot make the next round"
    ),
    "hosted": (
        "aisuite 0.2.0 aisuite/providers/anthropic_provider.py and gemini_provider.py convert_tool_spec: `if tool.get(\"type\") != "
        "\"function\": continue` (any other tool is dropped); the OpenAI provider takes Chat Completions tools, which have no hosted tool"
    ),
    "result_parts": (
        "aisuite 0.2.0 aisuite/providers/anthropic_provider.py _create_tool_result_message puts a tool message's content into "
        "`tool_result` as given (OpenAI-shaped parts unconverted) and gemini_provider.py _result_payload makes it one JSON object: no "
        "documented form for a result given as text and image parts"
    ),
    "continue_with": (
        "aisuite 0.2.0 aisuite/client.py Client.chat.completions.create: the Chat Completions shape only; no Responses API, so no "
        "previous_response_id"
    ),
    "caller_tools": (
        "aisuite 0.2.0 aisuite/providers/anthropic_provider.py and gemini_provider.py convert_tool_spec keep `type: function` tools only; "
        "no OpenAI custom (freeform/grammar) tool for every provider"
    ),
    "compaction": (
        "aisuite 0.2.0: no context-management or compaction parameter in aisuite/client.py or any provider module (the package's only "
        "'compaction' is its agents' own state store, aisuite/agents/postgres_state_store.py)"
    ),
    "eager_input_streaming": (
        "aisuite 0.2.0 aisuite/providers/anthropic_provider.py AnthropicMessageConverter.convert_tool_spec builds each Anthropic tool from "
        "name, description and input_schema only: a tool's eager_input_streaming is not sent"
    ),
    "defer_loading": (
        "aisuite 0.2.0 aisuite/providers/anthropic_provider.py convert_tool_spec copies name, description and input_schema only (no "
        "defer_loading) and drops non-function tools (no tool search); Chat Completions has neither"
    ),
    "namespace": "aisuite 0.2.0 aisuite/client.py: the Chat Completions shape only; a namespace is an OpenAI Responses tool group",
}


if __name__ == "__main__":
    td.serve(call, supports=["round_routes"], unsupported=UNSUPPORTED)
