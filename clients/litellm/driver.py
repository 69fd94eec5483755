"""tooltape driver for the LiteLLM Python SDK: `litellm.completion` (the OpenAI Chat shape in and
out) to each provider by the model prefix of the route's options; streamed results are the
chunks LiteLLM yields, accumulated by `litellm.stream_chunk_builder` (its documented helper).

Tool results given as parts (`result_parts`) are the tool message's content as OpenAI Chat
content parts (`text`, an image as `image_url` with a data URL or its URL), LiteLLM's one input
shape for every provider.

Thinking (`thinking`) is LiteLLM's documented `thinking={"type": "enabled", "budget_tokens": N}`
(docs.litellm.ai/docs/reasoning_content, the same for every provider it maps it to). Across rounds
the driver keeps what a caller keeps: the assistant message LiteLLM returned (its `thinking_blocks`,
`reasoning_content`, `provider_specific_fields` as the library set them), handed over as the
result's `reasoning` (`[{"litellm": message}]`, the message as a dict) and appended as it is to the
next round's messages in place of the protocol's neutral copy."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td

import litellm


def chat_messages(messages):
    """The conversation as LiteLLM's callers keep it: an assistant turn the library returned is
    its own message (kept in the result's `reasoning`), the rest the protocol's Chat messages."""
    out = []
    for m in messages:
        kept = (m.get("reasoning") or [{}])[0].get("litellm") if m["role"] == "assistant" else None
        out.extend([kept] if kept else td.chat_messages([m], parts=True))
    return out


def message_result(message, finish, usage):
    """The result document, with the message LiteLLM returned kept for the next round."""
    result = td.chat_message_result(message, finish, usage)
    result["reasoning"] = [{"litellm": message.model_dump(mode="json", exclude_none=True)}]
    return result


# LiteLLM's own refusal is the citation.
REFUSED = (
    "LiteLLM 1.110.2 raised UnsupportedParamsError (litellm/exceptions.py), its documented refusal of a parameter the "
    "provider has no knob for unless drop_params is set"
)

# Anthropic's tool-search server tools, by the names LiteLLM knows them
# (types/llms/anthropic.py ANTHROPIC_TOOL_SEARCH_TOOL_NAMES).
SEARCHES = {
    "tool_search_tool_regex_20251119": "tool_search_tool_regex",
    "tool_search_tool_bm25_20251119": "tool_search_tool_bm25",
}


def tools_of(trial, tools):
    """The Chat tools with each trial tool's `defer_loading` and `eager_input_streaming` on the
    tool, where LiteLLM reads them (llms/anthropic/chat/transformation.py: `tool.get(
    "defer_loading")`; llms/anthropic/common_utils.py eager_input_streaming_flag)."""
    for t, tool in zip(trial["tools"], tools):
        if t.get("namespace"):
            raise td.Unsupported(["namespace"])
        for k in ("defer_loading", "eager_input_streaming"):
            if t.get(k):
                tool[k] = True
        if t.get("allowed_callers"):
            # The tool's allowed_callers, where LiteLLM reads them for Anthropic
            # (llms/anthropic/chat/transformation.py `tool.get("allowed_callers")`): code is the
            # code-execution tool's type.
            runner = next((h["variant"] for h in trial.get("hosted") or [] if h.get("type") == "programmatic"), None)
            tool["allowed_callers"] = [runner if c == "programmatic" else c for c in t["allowed_callers"]]
    return tools


def call(trial, messages):
    opts = trial.get("options") or {}
    kw = dict(
        model=opts.get("prefix", "openai/") + trial["model"],
        api_base=trial["base_url"] + opts.get("base_suffix", ""),
        api_key=trial["api_key"],
        messages=chat_messages(messages),
        num_retries=0,
        **td.chat_kwargs(trial),
    )
    if trial.get("thinking") is not None:
        kw["thinking"] = {"type": "enabled", "budget_tokens": trial["thinking"]}
    if kw.get("tools"):
        kw["tools"] = tools_of(trial, kw["tools"])
    for h in trial.get("hosted") or []:
        if h.get("type") == "programmatic":
            # The runner as the route's API spells it: Anthropic's code-execution tool
            # (ANTHROPIC_HOSTED_TOOLS keeps it), OpenAI's `programmatic_tool_calling`.
            v = h.get("variant")
            kw.setdefault("tools", []).append({"type": v, "name": "code_execution"} if v.startswith("code_execution_") else {"type": v})
            continue
        if h.get("type") != "tool_search":
            raise td.Unsupported(["hosted " + str(h.get("type"))])
        # The tool search as the route's API spells it, beside the functions: LiteLLM maps an
        # Anthropic search tool (types/llms/anthropic.py ANTHROPIC_TOOL_SEARCH_TOOL_TYPES) and
        # OpenAI's `tool_search` (responses/litellm_completion_transformation/tool_search.py).
        variant = h.get("variant")
        search = {"type": "tool_search"} if variant == "tool_search" else {"type": variant, "name": SEARCHES.get(variant, variant)}
        kw.setdefault("tools", []).append(search)
    # The container the last answer's code ran in (LiteLLM keeps Anthropic's `container` in the
    # message's provider_specific_fields), named again as a provider-specific param, which
    # completion() passes through (docs.litellm.ai/docs/completion/provider_specific_params).
    kept = [(m.get("reasoning") or [{}])[0].get("litellm") for m in messages if m["role"] == "assistant"]
    containers = [((k or {}).get("provider_specific_fields") or {}).get("container") for k in kept]
    containers = [c["id"] for c in containers if isinstance(c, dict) and c.get("id")]
    if containers:
        kw["container"] = containers[-1]
    if trial.get("compaction"):
        # LiteLLM's `context_management`, OpenAI's form, which it maps for Anthropic
        # (llms/anthropic/chat/transformation.py map_openai_context_management_to_anthropic).
        kw["context_management"] = [{"type": "compaction"}]
    try:
        if not trial["stream"]:
            r = litellm.completion(**kw)
            return message_result(r.choices[0].message, r.choices[0].finish_reason, getattr(r, "usage", None))
        raw, chunks = [], []
        for chunk in litellm.completion(stream=True, stream_options={"include_usage": True}, **kw):
            raw.append(chunk)
            doc = td.chat_chunk(chunk)
            if doc:
                chunks.append(doc)
    except litellm.UnsupportedParamsError as e:
        # LiteLLM refuses a parameter the provider has no knob for (unless drop_params is set): the
        # library's own refusal is the citation.
        raise td.Unsupported([str(e).splitlines()[0][:200]], cite=REFUSED) from e
    final = litellm.stream_chunk_builder(raw, messages=kw["messages"])
    if final is None:
        result = {"calls": [], "text": None, "finish": None, "usage": None}
    else:
        result = message_result(final.choices[0].message, final.choices[0].finish_reason, getattr(final, "usage", None))
    result["chunks"] = chunks
    return result


# Why each entry this driver answers `unsupported` for is not expressible through LiteLLM 1.110.2
# (its installed source: litellm/), by `litellm.completion`, its OpenAI Chat-shaped API.
UNSUPPORTED = {
    "hosted web_search": (
        "DRIVER GAP, not a library limit: LiteLLM 1.110.2 documents web search through completion's `web_search_options` (litellm/main.py "
        "completion); this driver does not pass it yet"
    ),
    "continue_with": (
        "LiteLLM 1.110.2 litellm/main.py completion: the Chat Completions shape, each call the whole conversation; previous_response_id "
        "belongs to its separate litellm.responses() API, not completion()"
    ),
    "caller_tools": (
        "DRIVER GAP, not verified either way: LiteLLM 1.110.2 passes Chat tools it does not map to OpenAI as given; whether a `custom` "
        "tool reaches each provider was not audited"
    ),
    "namespace": (
        "LiteLLM 1.110.2 completion's Chat tools have no namespace: completion_extras/litellm_responses_transformation/transformation.py "
        "reads namespaces only from Responses-shaped `type: namespace` tools and tool_search_output items of the Responses bridge, a shape "
        "completion's Chat `tools` do not document"
    ),
}


if __name__ == "__main__":
    td.serve(
        call,
        supports=[
            "thinking",
            "result_parts",
            "round_routes",
            "defer_loading",
            "eager_input_streaming",
            "compaction",
            "hosted",
            "allowed_callers",
        ],
        unsupported=UNSUPPORTED,
    )
