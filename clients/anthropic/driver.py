"""tooltape driver for the official `anthropic` Python SDK: Messages, buffered (`create`) and
streamed (`messages.stream()`, whose accumulated final message is the result; its raw events
are the chunks). Tool results given as parts (`result_parts`) go as `tool_result` content
blocks (`text`, `image` with a base64 or url source), as the Messages API documents; hosted web
search (`hosted`) as the SDK's `web_search_20250305` server tool, REQUIRED grounding as
`tool_choice={"type": "tool", "name": "web_search"}` (the Messages API's way to force a tool).
A tool the caller asks to stream eagerly carries `eager_input_streaming: True` (a field of the
SDK's `ToolParam`: Anthropic's fine-grained tool streaming).

Thinking (`thinking`) is `thinking={"type": "enabled", "budget_tokens": N}` with the trial's
budget. Across rounds, thinking on or off, the driver keeps what Anthropic's tool-use and
extended-thinking docs tell a caller to keep (docs.anthropic.com/en/docs/build-with-claude/
extended-thinking, "Preserving thinking blocks"): the response's `content` as it came (thinking
blocks with their signatures, redacted_thinking blocks, text, tool_use), appended as the assistant
turn (`{"role": "assistant", "content": response.content}`), buffered or streamed (the stream's
accumulated final message). The blocks (as dicts) are the result's `reasoning` (`[{"anthropic":
[...]}]`) and take the place of the protocol's neutral copy of that turn.

Programmatic calls (class 30): a tool's `allowed_callers` (ToolParam.allowed_callers, `programmatic`
written as the trial's code-execution tool type) beside that tool (`code_execution_20250825`); the
kept content carries the code's `server_tool_use` and each call's `caller`, and the answer's
`container` (Message.container) is kept beside it and named on the next request."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td
from anthropic import Anthropic


def result_content(m):
    """A tool result's content: its parts as content blocks when given as parts, else its text."""
    if not m.get("parts"):
        return m.get("content") or ""
    return td.convert_parts(
        m["parts"],
        text=lambda t: {"type": "text", "text": t},
        image=lambda mime, data: {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}},
        image_url=lambda url: {"type": "image", "source": {"type": "url", "url": url}},
    )


def messages_of(messages):
    system, out = [], []
    for m in messages:
        role = m["role"]
        if role == "system":
            system.append(m.get("content") or "")
        elif kept := td.kept_turn(m, "anthropic"):
            # The content the SDK returned for this turn, as it came.
            out.append({"role": "assistant", "content": kept})
        elif role == "assistant":
            blocks = []
            if m.get("content"):
                blocks.append({"type": "text", "text": m["content"]})
            for c in m.get("tool_calls") or []:
                blocks.append(
                    {"type": "tool_use", "id": c.get("id"), "name": c.get("name"), "input": td.arguments_object(c.get("arguments"))}
                )
            out.append({"role": "assistant", "content": blocks})
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.get("call_id"), "content": result_content(m)}
            if m.get("is_error"):
                block["is_error"] = True
            # Consecutive results are one user turn.
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        else:
            out.append({"role": "user", "content": m.get("content") or ""})
    return ("\n\n".join(system) or None), out


# Anthropic's tool-search server tools, each with the name its param type fixes
# (types/tool_search_tool_regex_20251119_param.py, types/tool_search_tool_bm25_20251119_param.py).
SEARCHES = {
    "tool_search_tool_regex_20251119": "tool_search_tool_regex",
    "tool_search_tool_bm25_20251119": "tool_search_tool_bm25",
}


def kwargs(trial, messages):
    system, msgs = messages_of(messages)
    kw = {"model": trial["model"], "messages": msgs, "max_tokens": trial.get("max_tokens") or 1024}
    if system:
        kw["system"] = system
    if trial["tools"]:
        tools = []
        for t in trial["tools"]:
            tool = {"name": t["name"], "input_schema": td.parameters(trial, t)}
            if t.get("description") is not None:
                tool["description"] = t["description"]
            if trial.get("strict"):
                tool["strict"] = True
            if t.get("eager_input_streaming"):
                tool["eager_input_streaming"] = True
            if t.get("defer_loading"):
                # ToolParam.defer_loading: loaded when the tool search finds it.
                tool["defer_loading"] = True
            if t.get("allowed_callers"):
                # ToolParam.allowed_callers: `direct`, or the code-execution tool's type (class 30).
                tool["allowed_callers"] = [runner(trial) if c == "programmatic" else c for c in t["allowed_callers"]]
            tools.append(tool)
        kw["tools"] = tools
    for h in trial.get("hosted") or []:
        if h.get("type") == "tool_search" and h.get("variant") in SEARCHES:
            kw.setdefault("tools", []).append({"type": h["variant"], "name": SEARCHES[h["variant"]]})
            continue
        if h.get("type") == "programmatic" and h.get("variant") in RUNNERS:
            kw.setdefault("tools", []).append({"type": h["variant"], "name": "code_execution"})
            continue
        if h.get("type") != "web_search":
            raise td.Unsupported(["hosted " + str(h.get("type")) + " " + str(h.get("variant"))])
        kw.setdefault("tools", []).append({"type": "web_search_20250305", "name": "web_search"})
    required = any(h.get("grounding") == "required" for h in trial.get("hosted") or [])
    choice = trial.get("tool_choice")
    if required and choice not in (None, "auto"):
        raise td.Unsupported(["hosted grounding required with tool_choice"])
    tc = None
    if required:
        tc = {"type": "tool", "name": "web_search"}
    elif choice == "auto":
        tc = {"type": "auto"}
    elif choice == "none":
        tc = {"type": "none"}
    elif choice == "required":
        tc = {"type": "any"}
    elif isinstance(choice, dict) and "name" in choice:
        tc = {"type": "tool", "name": choice["name"]}
    elif isinstance(choice, dict):
        raise td.Unsupported(["tool_choice allowed"])
    if trial.get("parallel_tool_calls") is False:
        tc = tc or {"type": "auto"}
        if tc["type"] == "none":
            pass
        else:
            tc["disable_parallel_tool_use"] = True
    if tc is not None:
        kw["tool_choice"] = tc
    if trial.get("thinking") is not None:
        kw["thinking"] = {"type": "enabled", "budget_tokens": trial["thinking"]}
    # The container the last answer's code ran in (MessageCreateParams.container), named again.
    containers = [td.kept_turn(m, "container") for m in messages]
    if [c for c in containers if c]:
        kw["container"] = [c for c in containers if c][-1]
    return kw


# Anthropic's code-execution tools, the runners of programmatic calls
# (types/code_execution_tool_20250825_param.py, its 20260120 successor).
RUNNERS = ("code_execution_20250825", "code_execution_20260120")


def runner(trial):
    """The trial's code-execution tool type: what a tool's `allowed_callers` names for code."""
    return next(h["variant"] for h in trial.get("hosted") or [] if h.get("type") == "programmatic")


def result_of(msg):
    """The result document, with the returned content kept for the next round."""
    calls = [{"id": b.id, "name": b.name, "arguments": b.input} for b in msg.content if b.type == "tool_use"]
    text = "".join(b.text for b in msg.content if b.type == "text")
    usage = None
    if msg.usage is not None:
        usage = {"input_tokens": msg.usage.input_tokens, "output_tokens": msg.usage.output_tokens}
    result = {"calls": calls, "text": text or None, "finish": msg.stop_reason, "usage": usage}
    kept = {"anthropic": [b.model_dump(mode="json", exclude_none=True) for b in msg.content]}
    if getattr(msg, "container", None) is not None:
        # Message.container: the code execution's container, to name on the next request.
        kept["container"] = msg.container.id
    result["reasoning"] = [kept]
    return result


def call(trial, messages):
    if trial["api"] != "anthropic":
        raise td.Unsupported(["api " + trial["api"]])
    c = Anthropic(base_url=trial["base_url"], api_key=trial["api_key"], max_retries=0)
    kw = kwargs(trial, messages)
    if not trial["stream"]:
        return result_of(c.messages.create(**kw))
    chunks = []
    # The indices of client tool_use blocks: their input deltas are call arguments (a server
    # tool's, the hosted search's query, are not).
    tool_blocks = set()
    with c.messages.stream(**kw) as stream:
        for ev in stream:
            if ev.type == "content_block_start" and ev.content_block.type == "tool_use":
                tool_blocks.add(ev.index)
                head = {"index": ev.index, "id": ev.content_block.id, "name": ev.content_block.name}
                if ev.content_block.input:
                    head["arguments"] = ev.content_block.input
                chunks.append({"calls": [head]})
            elif ev.type == "content_block_delta" and ev.delta.type == "input_json_delta" and ev.index in tool_blocks:
                chunks.append({"calls": [{"index": ev.index, "arguments": ev.delta.partial_json}]})
            elif ev.type == "content_block_delta" and ev.delta.type == "text_delta":
                chunks.append({"text": ev.delta.text})
            elif ev.type == "message_delta" and ev.delta.stop_reason:
                chunks.append({"finish": ev.delta.stop_reason})
        final = stream.get_final_message()
    result = result_of(final)
    result["chunks"] = chunks
    return result


# Why each entry this driver answers `unsupported` for is not expressible through anthropic 2.10.0
# (its installed source: anthropic/types/, the Messages API's params).
UNSUPPORTED = {
    "continue_with": (
        "anthropic 2.10.0 types/message_create_params.py MessageCreateParamsBase: no previous_response_id (an OpenAI Responses field); "
        "every Messages call carries the whole conversation"
    ),
    "caller_tools": (
        "anthropic 2.10.0 types/tool_union_param.py ToolUnionParam: Anthropic's tool and server-tool types only; no OpenAI custom "
        "(freeform/grammar) tool"
    ),
    "round_routes": (
        "anthropic 2.10.0 anthropic/_client.py Anthropic: one provider's client (the Messages API), no other provider to continue on"
    ),
    "compaction": (
        "anthropic 2.10.0 documents compaction only in the beta namespace (client.beta.messages with "
        "types/beta/beta_context_management_config_param.py and beta_compact_20260112_edit_param.py); types/message_create_params.py "
        "(client.messages, this driver's call) has no context_management. DRIVER GAP, not a library limit: the case does not say how to "
        "ask, and this driver does not yet call client.beta.messages"
    ),
    "namespace": (
        "anthropic 2.10.0 types/tool_param.py ToolParam: no namespace (an OpenAI Responses tool group); ToolUnionParam has no namespace "
        "type"
    ),
    "hosted tool_search tool_search": (
        "anthropic 2.10.0 types/tool_union_param.py ToolUnionParam: its tool searches are tool_search_tool_regex_20251119 and "
        "tool_search_tool_bm25_20251119; OpenAI's `tool_search` is no Messages tool"
    ),
    "hosted": (
        "anthropic 2.10.0 types/tool_union_param.py ToolUnionParam: the server tools it lists (web_search_20250305, tool_search_tool_*, "
        "code execution, ...); none other"
    ),
    "hosted grounding required with tool_choice": (
        "anthropic 2.10.0 types/tool_choice_param.py ToolChoiceParam: one choice per request (auto, any, tool NAME, none); forcing the web "
        "search (tool web_search) leaves no room for the trial's own tool_choice"
    ),
    "tool_choice allowed": (
        "anthropic 2.10.0 types/tool_choice_param.py ToolChoiceParam: auto, any, tool (one name), none; no allowed-tools subset"
    ),
    "api": "this driver's route is the Messages API only (clients/anthropic.toml); anthropic 2.10.0 speaks no other wire format",
}


if __name__ == "__main__":
    td.serve(
        call,
        supports=["thinking", "result_parts", "hosted", "eager_input_streaming", "defer_loading", "allowed_callers"],
        unsupported=UNSUPPORTED,
    )
