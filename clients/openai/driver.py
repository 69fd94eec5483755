"""tooltape driver for the official `openai` Python SDK: Chat Completions and Responses, buffered
(`create`) and streamed (the SDK's `stream()` helpers, whose accumulated final completion or
response is the result; their raw chunks and events are the chunks)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td  # noqa: E402
from openai import OpenAI  # noqa: E402


def client(trial):
    return OpenAI(base_url=trial["base_url"] + "/v1", api_key=trial["api_key"], max_retries=0)


def chat(trial, messages):
    kw = dict(model=trial["model"], messages=td.chat_messages(messages), **td.chat_kwargs(trial))
    c = client(trial)
    if not trial["stream"]:
        r = c.chat.completions.create(**kw)
        return td.chat_message_result(r.choices[0].message, r.choices[0].finish_reason, r.usage)
    chunks = []
    with c.chat.completions.stream(stream_options={"include_usage": True}, **kw) as stream:
        for event in stream:
            if event.type == "chunk":
                doc = td.chat_chunk(event.chunk)
                if doc:
                    chunks.append(doc)
        final = stream.get_final_completion()
    result = td.chat_message_result(final.choices[0].message, final.choices[0].finish_reason, final.usage)
    result["chunks"] = chunks
    return result


def responses(trial, messages):
    kw = td.responses_kwargs(trial, messages)
    c = client(trial)
    if not trial["stream"]:
        return td.responses_result(c.responses.create(**kw))
    chunks = []
    with c.responses.stream(**kw) as stream:
        for ev in stream:
            doc = td.responses_event(ev)
            if doc:
                chunks.append(doc)
        final = stream.get_final_response()
    result = td.responses_result(final)
    result["chunks"] = chunks
    return result


def call(trial, messages):
    if trial["api"] == "openai-chat":
        return chat(trial, messages)
    if trial["api"] == "openai-responses":
        return responses(trial, messages)
    raise td.Unsupported(["api " + trial["api"]])


if __name__ == "__main__":
    td.serve(call)
