"""tooltape driver for the official `openai` Python SDK: Chat Completions and Responses, buffered
(`create`) and streamed (the SDK's `stream()` helpers, whose accumulated final completion or
response is the result; their raw chunks and events are the chunks).

Optional protocol features, the same code for both routes: tool results given as parts
(`result_parts`) go as the API's content parts (Chat: a tool message's `content` as text parts,
the only parts a `role: tool` message takes; Responses: `function_call_output.output` as
`input_text`/`input_image` items); on the Responses route a trial continued by
`previous_response_id` (`continue_with`) sends only the round's results with
`responses.create(previous_response_id=…)`, the answer's `id` handed back as `response_id`;
hosted web search (`hosted`, Responses only: Chat has no hosted tool in `tools`) as
`{"type": "web_search"}`, REQUIRED grounding as the one hosted `tool_choice` the SDK's types offer
for search, `{"type": "web_search_preview"}` with that tool; the caller's own wire tools
(`caller_tools`, OpenAI `custom` tools) beside the functions as they are.

Thinking (`thinking`), as OpenAI's reasoning guide documents it (platform.openai.com/docs/guides/
reasoning): Responses `reasoning={"effort": "low"}` (an effort, not a token budget: the budget is
not carried); unless the trial continues by `previous_response_id`, `store=False` with
`include=["reasoning.encrypted_content"]`, the guide's stateless way to keep reasoning items, and
the response's `output` items are the next round's input as they are (`input += response.output`),
so each reasoning item goes back before its call with its `encrypted_content`. Chat
`reasoning_effort="low"`, the returned message appended as it is (`messages.append(message)`);
Chat returns no opaque reasoning state, so nothing beyond the message is carried back.

On every route, thinking on or off, the next round's history is what the SDK returned, as OpenAI's
function-calling guide appends it: the library's returned items (the response's output, the
completion's message, as dicts) are the result's `reasoning` (`[{"openai": [...]}]`) and take the
place of the protocol's neutral copy of that assistant turn."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td
from openai import OpenAI


def client(trial):
    return OpenAI(base_url=trial["base_url"] + "/v1", api_key=trial["api_key"], max_retries=0)


def chat_parts(parts):
    """A tool result's parts as Chat content parts: text only (Chat's tool message takes no image)."""
    return td.convert_parts(parts, text=lambda t: {"type": "text", "text": t})


def chat_messages(messages):
    """The Chat messages (one per protocol message), tool results given as parts sent as parts,
    an assistant turn the SDK returned as that message."""
    out = td.chat_messages(messages)
    for i, (m, msg) in enumerate(zip(messages, out)):
        if m["role"] == "tool" and m.get("parts"):
            msg["content"] = chat_parts(m["parts"])
        if kept := td.kept_turn(m, "openai"):
            out[i] = kept[0]
    return out


def returned(items):
    """The library's returned objects as the result's `reasoning`, for the next round."""
    return [{"openai": [i.model_dump(mode="json", exclude_none=True) for i in items]}]


def chat_unsupported(trial):
    """What Chat Completions has no field for: deferred, namespaced and code-called tools, compaction."""
    fields = [k for k in ("defer_loading", "namespace", "allowed_callers") if any(t.get(k) for t in trial["tools"])]
    if trial.get("compaction"):
        fields.append("compaction")
    if fields:
        raise td.Unsupported(fields, cite=CHAT_CITE)


def responses_kwargs(trial, messages):
    previous, sent = td.continued(trial, messages)
    # Each assistant turn the SDK answered goes back as its output items, as they came.
    kw = td.responses_kwargs(trial, sent, parts=True, kept="openai")
    if previous:
        kw["previous_response_id"] = previous
    if trial.get("thinking") is not None:
        kw["reasoning"] = {"effort": "low"}
        if trial.get("continue_with") is None:
            kw["store"] = False
            kw["include"] = ["reasoning.encrypted_content"]
    if kw.get("tools"):
        # FunctionToolParam's `defer_loading` and `allowed_callers` (`direct`, `programmatic`:
        # class 30), namespaces as NamespaceToolParam.
        kw["tools"] = td.responses_function_tools(trial, kw["tools"], keys=("defer_loading", "allowed_callers"))
    if trial.get("compaction"):
        # Server-side compaction, as the SDK's `context_management` documents it; the compaction
        # item it answers goes back with the response's other output items.
        kw["context_management"] = [{"type": "compaction"}]
    # Hosted web search beside the functions; REQUIRED forces it with the hosted tool_choice.
    hosted = trial.get("hosted") or []
    required = any(h.get("grounding") == "required" for h in hosted)
    for h in hosted:
        if h.get("type") == "tool_search" and h.get("variant") == "tool_search":
            # ToolSearchToolParam: the hosted search over the deferred functions.
            kw.setdefault("tools", []).append({"type": "tool_search"})
            continue
        if h.get("type") == "programmatic" and h.get("variant") == "programmatic_tool_calling":
            # ToolParam's `programmatic_tool_calling`: the runner of the functions' programs.
            kw.setdefault("tools", []).append({"type": "programmatic_tool_calling"})
            continue
        if h.get("type") != "web_search":
            raise td.Unsupported(["hosted " + str(h.get("type")) + " " + str(h.get("variant"))])
        kw.setdefault("tools", []).append({"type": "web_search_preview" if required else "web_search"})
    if required:
        if trial.get("tool_choice") not in (None, "auto"):
            raise td.Unsupported(["hosted grounding required with tool_choice"])
        kw["tool_choice"] = {"type": "web_search_preview"}
    if trial.get("caller_tools"):
        kw.setdefault("tools", []).extend(trial["caller_tools"])
    return kw


def chat(trial, messages):
    if trial.get("hosted"):
        raise td.Unsupported(["hosted"])
    chat_unsupported(trial)
    kw = dict(model=trial["model"], messages=chat_messages(messages), **td.chat_kwargs(trial))
    if trial.get("caller_tools"):
        kw.setdefault("tools", []).extend(trial["caller_tools"])
    if trial.get("thinking") is not None:
        kw["reasoning_effort"] = "low"
    c = client(trial)
    if not trial["stream"]:
        r = c.chat.completions.create(**kw)
        result = td.chat_message_result(r.choices[0].message, r.choices[0].finish_reason, r.usage)
        return dict(result, reasoning=returned([r.choices[0].message]))
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
    result["reasoning"] = returned([final.choices[0].message])
    return result


def responses(trial, messages):
    kw = responses_kwargs(trial, messages)
    c = client(trial)
    if not trial["stream"]:
        r = c.responses.create(**kw)
        result = td.responses_result(r)
        result["response_id"] = r.id
        result["reasoning"] = returned(r.output)
        return result
    chunks = []
    with c.responses.stream(**kw) as stream:
        for ev in stream:
            doc = td.responses_event(ev)
            if doc:
                chunks.append(doc)
        final = stream.get_final_response()
    result = td.responses_result(final)
    result["response_id"] = final.id
    result["chunks"] = chunks
    result["reasoning"] = returned(final.output)
    return result


def call(trial, messages):
    if trial["api"] == "openai-chat":
        return chat(trial, messages)
    if trial["api"] == "openai-responses":
        return responses(trial, messages)
    raise td.Unsupported(["api " + trial["api"]])


# Deferred and namespaced tools and compaction on the Chat route: Chat's own types have none.
CHAT_CITE = (
    "openai 3.51.0 types/shared_params/function_definition.py FunctionDefinition (a Chat tool's function): name, description, "
    "parameters, strict; no defer_loading, namespace or allowed_callers, and resources/chat/completions/completions.py "
    "Completions.create has no context_management: tool search, namespaces, programmatic calls and compaction are the "
    "Responses API's (types/responses/function_tool_param.py, namespace_tool_param.py, response_create_params.py "
    "ContextManagement)"
)

# Why each entry this driver answers `unsupported` for is not expressible through openai 3.51.0
# (its installed source: openai/types/, the APIs' params).
UNSUPPORTED = {
    "round_routes": (
        "openai 3.51.0 openai/_client.py OpenAI: one provider's client (OpenAI's Chat Completions and Responses), no other provider to "
        "continue on"
    ),
    "eager_input_streaming": (
        "openai 3.51.0 types/responses/function_tool_param.py FunctionToolParam and types/shared_params/function_definition.py: no "
        "eager_input_streaming (an Anthropic tool field; the SDK has no Anthropic route)"
    ),
    "hosted tool_search": (
        "openai 3.51.0 types/responses/tool_search_tool_param.py ToolSearchToolParam: `type: tool_search` is OpenAI's one tool search; "
        "Anthropic's tool_search_tool_regex/bm25_20251119 are no Responses tool (types/responses/tool_param.py ToolParam)"
    ),
    "hosted": (
        "openai 3.51.0 types/chat/completion_create_params.py CompletionCreateParamsBase.tools: Chat Completions takes function and custom "
        "tools only (hosted tools are the Responses API's, types/responses/tool_param.py ToolParam); on Responses the web search and "
        "tool_search are the hosted tools this driver sends"
    ),
    "hosted grounding required with tool_choice": (
        "openai 3.51.0 types/responses/response_create_params.py ToolChoice: one tool_choice per request; forcing the web search "
        "(ToolChoiceTypesParam web_search_preview) leaves no room for the trial's own tool_choice"
    ),
    "api": "this driver's routes are Chat Completions and Responses (clients/openai.toml); openai 3.51.0 speaks no other wire format",
}


if __name__ == "__main__":
    td.serve(
        call,
        supports=[
            "thinking",
            "result_parts",
            "continue_with",
            "hosted",
            "caller_tools",
            "defer_loading",
            "namespace",
            "compaction",
            "allowed_callers",
        ],
        unsupported=UNSUPPORTED,
    )
