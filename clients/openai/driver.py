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


def responses_input(messages):
    items, instructions = [], []
    for m in messages:
        role = m["role"]
        if role == "system":
            instructions.append(m.get("content") or "")
        elif role == "assistant":
            if m.get("content"):
                items.append({"role": "assistant", "content": m["content"]})
            for c in m.get("tool_calls") or []:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": c.get("id"),
                        "name": c.get("name"),
                        "arguments": td.arguments_text(c.get("arguments")),
                    }
                )
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": m.get("call_id"), "output": m.get("content") or ""})
        else:
            items.append({"role": "user", "content": m.get("content") or ""})
    return items, ("\n\n".join(instructions) or None)


def responses_kwargs(trial, messages):
    items, instructions = responses_input(messages)
    kw = {"model": trial["model"], "input": items}
    if instructions:
        kw["instructions"] = instructions
    if trial["tools"]:
        kw["tools"] = [
            {
                "type": "function",
                "name": t["name"],
                "description": t.get("description"),
                "parameters": td.parameters(trial, t),
                "strict": bool(trial.get("strict")),
            }
            for t in trial["tools"]
        ]
    choice = trial.get("tool_choice")
    if isinstance(choice, str):
        kw["tool_choice"] = choice
    elif choice is not None and "name" in choice:
        kw["tool_choice"] = {"type": "function", "name": choice["name"]}
    elif choice is not None:
        kw["tool_choice"] = {
            "type": "allowed_tools",
            "mode": choice.get("mode", "auto"),
            "tools": [{"type": "function", "name": n} for n in choice["allowed"]],
        }
    if trial.get("parallel_tool_calls") is not None:
        kw["parallel_tool_calls"] = trial["parallel_tool_calls"]
    if trial.get("max_tokens") is not None:
        kw["max_output_tokens"] = trial["max_tokens"]
    return kw


def responses_result(r):
    calls = [
        {"id": item.call_id, "name": item.name, "arguments": item.arguments}
        for item in r.output
        if item.type == "function_call"
    ]
    finish = r.status
    if r.status == "incomplete" and r.incomplete_details is not None:
        finish = r.incomplete_details.reason
    usage = None
    if r.usage is not None:
        usage = {"input_tokens": r.usage.input_tokens, "output_tokens": r.usage.output_tokens}
    refusal = "".join(
        part.refusal
        for item in r.output
        if item.type == "message"
        for part in item.content
        if part.type == "refusal"
    )
    return {"calls": calls, "text": r.output_text or refusal or None, "finish": finish, "usage": usage}


def responses(trial, messages):
    kw = responses_kwargs(trial, messages)
    c = client(trial)
    if not trial["stream"]:
        return responses_result(c.responses.create(**kw))
    chunks = []
    ids = {}
    with c.responses.stream(**kw) as stream:
        for ev in stream:
            if ev.type == "response.output_item.added" and ev.item.type == "function_call":
                ids[ev.output_index] = ev.item.call_id
                chunks.append({"calls": [{"index": ev.output_index, "id": ev.item.call_id, "name": ev.item.name}]})
            elif ev.type == "response.function_call_arguments.delta":
                chunks.append({"calls": [{"index": ev.output_index, "arguments": ev.delta}]})
            elif ev.type == "response.function_call_arguments.done":
                # The whole arguments again: a caller reading this event has them at once.
                chunks.append({"calls": [{"index": ev.output_index, "arguments": td.arguments_object(ev.arguments)}]})
            elif ev.type == "response.output_text.delta":
                chunks.append({"text": ev.delta})
        final = stream.get_final_response()
    result = responses_result(final)
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
