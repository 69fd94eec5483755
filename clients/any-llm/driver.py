"""tooltape driver for any-llm: `any_llm.completion` (the OpenAI Chat shape in and out, to the
provider the route's options name) and `any_llm.responses` (the Responses route). any-llm yields
OpenAI-shaped chunks and has no accumulation helper: a streamed Chat result's calls are the chunks
gathered by index as its users do; a streamed Responses result is its terminal event's response.

Tool results given as parts (`result_parts`) go as OpenAI Chat content parts (`text`, `image_url`)
on the Chat shape any-llm translates for every provider, and as `function_call_output` items
(`input_text`, `input_image`) through `responses()`.

Thinking (`thinking`) on the Chat shape is `completion`'s portable `reasoning_effort` (api.py: one
parameter for every provider, each mapping it to its own API; levels, not a token budget, so the
driver asks `"low"` and the trial's budget is not carried; its default `"auto"` leaves each
provider's default, which for Anthropic is no thinking). Across rounds, thinking on or off, the
assistant message any-llm returned (its `reasoning`, its `extra_content` where the Anthropic
thinking signature is kept, its calls' `extra_content` where Gemini's `thought_signature` is) is
handed over as the result's `reasoning` (`[{"any_llm": message}]`) and appended as it is in the
next round; streamed, it is the message gathered from the deltas as a caller gathers it (any-llm
has no accumulator): text, `reasoning`, `extra_content`, the calls.

On the Responses route thinking is `responses(reasoning={"effort": "low"}, store=False,
include=["reasoning.encrypted_content"])` (api.py documents `reasoning`, `store`, and `include` with
that value, and input items "passed through unchanged so prior response output and reasoning items
can be replayed in a stateless conversation"); thinking on or off, the response's `output` items
are handed over as the result's `reasoning` (`[{"any_llm_responses": items}]`) and replayed as they
came as the next round's input, in place of the protocol's neutral copy of that turn (a round that
goes on through `completion()` on another provider gets the neutral copy: Responses reasoning is
not its own)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td
from any_llm import completion, responses
from any_llm.exceptions import UnsupportedParameterError


def with_output(result, response):
    """The result, with the response's output items kept for the next round."""
    if response is None:
        return result
    items = [i.model_dump(mode="json", exclude_none=True) if hasattr(i, "model_dump") else i for i in td.get(response, "output") or []]
    return dict(result, reasoning=[{"any_llm_responses": items}])


def chat_unsupported(trial):
    """What completion()'s Chat shape has no field for: deferred and namespaced tools, a tool
    search, compaction, a tool's eager streaming."""
    fields = [k for k in ("defer_loading", "namespace", "eager_input_streaming") if any(t.get(k) for t in trial["tools"])]
    if trial.get("hosted"):
        fields.append("hosted")
    if trial.get("compaction"):
        fields.append("compaction")
    if fields:
        raise td.Unsupported([f + " through completion()" for f in fields])


def call_responses(trial, messages):
    opts = trial.get("options") or {}
    # A turn `responses()` answered is replayed as its output items, as they came.
    kw = td.responses_kwargs(trial, messages, parts=True, kept="any_llm_responses")
    kw["input_data"] = kw.pop("input")
    kw.update(provider=opts.get("provider", "openai"), api_base=trial["base_url"] + opts.get("base_suffix", ""), api_key=trial["api_key"])
    if trial.get("thinking") is not None:
        kw.update(reasoning={"effort": "low"}, store=False, include=["reasoning.encrypted_content"])
    # responses() takes OpenAI tool dicts as given (api.py: "Python callables or OpenAI tool
    # dicts"; tools.py prepare_tools appends a dict unchanged): a deferred function carries
    # `defer_loading`, a namespaced one goes inside its `namespace` tool, the hosted search is
    # `{"type": "tool_search"}`; compaction is responses()' documented `context_management`.
    if kw.get("tools"):
        kw["tools"] = td.responses_function_tools(trial, kw["tools"])
    for h in trial.get("hosted") or []:
        if h.get("type") != "tool_search" or h.get("variant") != "tool_search":
            raise td.Unsupported(["hosted " + str(h.get("type")) + " " + str(h.get("variant"))])
        kw.setdefault("tools", []).append({"type": "tool_search"})
    if trial.get("compaction"):
        kw["context_management"] = [{"type": "compaction"}]
    if not trial["stream"]:
        r = responses(**kw)
        return with_output(td.responses_result(r), r)
    chunks, final = [], None
    for ev in responses(stream=True, **kw):
        doc = td.responses_event(ev)
        if doc:
            chunks.append(doc)
        if td.get(ev, "type") in ("response.completed", "response.incomplete", "response.failed"):
            final = td.get(ev, "response")
    result = td.responses_result(final) if final is not None else {"calls": [], "text": None}
    result["chunks"] = chunks
    return with_output(result, final)


def history(messages):
    """The Chat history, each assistant message as the library returned it."""
    out = td.chat_messages(messages, parts=True)
    for i, m in enumerate(messages):
        if kept := td.kept_turn(m, "any_llm"):
            out[i] = kept
    return out


def call(trial, messages):
    if trial["api"] == "openai-responses":
        try:
            return call_responses(trial, messages)
        except UnsupportedParameterError as e:
            raise td.Unsupported([str(e).splitlines()[0][:200]], cite=REFUSED) from e
    chat_unsupported(trial)
    opts = trial.get("options") or {}
    kw = dict(
        model=trial["model"],
        provider=opts.get("provider", "openai"),
        api_base=trial["base_url"] + opts.get("base_suffix", ""),
        api_key=trial["api_key"],
        messages=history(messages),
        **td.chat_kwargs(trial),
    )
    if trial.get("thinking") is not None:
        kw["reasoning_effort"] = "low"
    try:
        return complete(trial, kw)
    except UnsupportedParameterError as e:
        # any-llm refuses a parameter the provider has no knob for: not expressible.
        raise td.Unsupported([str(e).splitlines()[0][:200]], cite=REFUSED) from e


def complete(trial, kw):
    if not trial["stream"]:
        r = completion(**kw)
        result = td.chat_message_result(r.choices[0].message, r.choices[0].finish_reason, r.usage)
        return dict(result, reasoning=[{"any_llm": r.choices[0].message.model_dump(mode="json", exclude_none=True)}])
    chunks, text, finish, usage, extra = [], "", None, None, {}
    thought, message_extra = "", {}
    for chunk in completion(stream=True, **kw):
        choice = (td.get(chunk, "choices") or [None])[0]
        delta = td.get(choice, "delta")
        r = td.get(delta, "reasoning")
        thought += (r if isinstance(r, str) else td.get(r, "content") or "") if r else ""
        for provider, fields in (td.get(delta, "extra_content") or {}).items():
            message_extra.setdefault(provider, {}).update(fields)
        for d in td.get(delta, "tool_calls") or []:
            if td.get(d, "extra_content"):
                extra[td.get(d, "index")] = td.get(d, "extra_content")
        doc = td.chat_chunk(chunk)
        if doc:
            chunks.append(doc)
            text += doc.get("text", "")
            finish = doc.get("finish", finish)
        if getattr(chunk, "usage", None):
            usage = td.chat_usage(chunk.usage)
    order = []
    for c in (c for ch in chunks for c in ch.get("calls", [])):
        if c.get("index") not in order:
            order.append(c.get("index"))
    result = {"calls": td.chat_gathered(chunks), "text": text or None, "finish": finish, "usage": usage, "chunks": chunks}
    return dict(result, reasoning=[{"any_llm": gathered_message(result, thought, message_extra, [extra.get(i) for i in order])}])


def gathered_message(result, thought, message_extra, call_extras):
    """The assistant message a caller gathers from the stream's deltas, to append to its history."""
    msg = {"role": "assistant", "content": result["text"]}
    if thought:
        msg["reasoning"] = thought
    if message_extra:
        msg["extra_content"] = message_extra
    if result["calls"]:
        msg["tool_calls"] = []
        for c, x in zip(result["calls"], call_extras):
            tc = {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            if x:
                tc["extra_content"] = x
            msg["tool_calls"].append(tc)
    return msg


# any-llm's own refusal is the citation.
REFUSED = (
    "any-llm 1.40.2 raised UnsupportedParameterError (any_llm/exceptions.py), its documented refusal of a parameter the provider does not "
    "support"
)

# Why each entry this driver answers `unsupported` for is not expressible through any-llm 1.40.2
# (its installed source: any_llm/), by completion() (the Chat shape every provider takes) and
# responses() (the Responses route).
UNSUPPORTED = {
    "allowed_callers": (
        "any-llm 1.40.2 names allowed_callers nowhere in any_llm/: completion()'s tool conversion has no field for it; "
        "responses() passes OpenAI tool dicts as given, a DRIVER GAP on that route (this driver does not yet pass a tool's "
        "callers or a call's caller back; class 30)"
    ),
    "continue_with": (
        "DRIVER GAP, not a library limit: any-llm 1.40.2 any_llm/api.py responses() documents `previous_response_id`; this driver does not "
        "pass it yet"
    ),
    "caller_tools": (
        "DRIVER GAP, not verified either way: any-llm 1.40.2 any_llm/tools.py prepare_tools passes OpenAI tool dicts as given, so a "
        "`custom` tool may reach OpenAI's APIs; this driver does not pass one yet"
    ),
    "hosted web_search": (
        "DRIVER GAP, not verified either way: any-llm 1.40.2 any_llm/tools.py prepare_tools passes OpenAI tool dicts (a Responses "
        "`web_search`) and each provider's built-in tool instances (BUILT_IN_TOOLS, e.g. Gemini's types.Tool(google_search=...)) as given, "
        "per provider; this driver passes no hosted web search"
    ),
    "hosted tool_search": (
        "any-llm 1.40.2 any_llm/api.py responses() takes OpenAI tool dicts; Anthropic's tool_search_tool_regex/bm25_20251119 are no "
        "Responses tool"
    ),
    "defer_loading through completion()": (
        "any-llm 1.40.2 any_llm/providers/anthropic/utils.py _convert_tool_spec copies name, description and input_schema only (no "
        "defer_loading), and Chat Completions and Gemini have no deferred tools; OpenAI's tool search goes through responses() (this "
        "driver's Responses route)"
    ),
    "namespace through completion()": (
        "any-llm 1.40.2 completion() takes Chat tools, which have no namespace (an OpenAI Responses tool group, sent through responses() "
        "on this driver's Responses route)"
    ),
    "eager_input_streaming through completion()": (
        "any-llm 1.40.2 any_llm/providers/anthropic/utils.py _convert_tool_spec builds each Anthropic tool from name, description and "
        "input_schema only: a tool's eager_input_streaming is not sent"
    ),
    "hosted through completion()": (
        "DRIVER GAP, not verified either way: any-llm 1.40.2 any_llm/tools.py prepare_tools passes each provider's built-in tool instances "
        "(BUILT_IN_TOOLS) as given, per provider; this driver passes no hosted tool through completion() (and completion()'s Anthropic "
        "conversion, providers/anthropic/utils.py _convert_tool_spec, reads `function` tools)"
    ),
    "compaction through completion()": (
        "any-llm 1.40.2 any_llm/api.py completion() has no context-management parameter; compaction is responses()' `context_management` "
        "(OpenAI) and messages()' (Anthropic's Messages API, a separate entry point this driver does not use)"
    ),
}


if __name__ == "__main__":
    td.serve(
        call,
        supports=[
            "thinking", "result_parts", "round_routes", "defer_loading", "namespace", "compaction", "hosted", "eager_input_streaming"
        ],
        unsupported=UNSUPPORTED,
    )
