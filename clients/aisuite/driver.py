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


if __name__ == "__main__":
    td.serve(call, supports=["round_routes"])
