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
        # LiteLLM refuses a parameter the provider has no knob for (unless drop_params is set).
        raise td.Unsupported([str(e).splitlines()[0][:200]]) from e
    final = litellm.stream_chunk_builder(raw, messages=kw["messages"])
    if final is None:
        result = {"calls": [], "text": None, "finish": None, "usage": None}
    else:
        result = message_result(final.choices[0].message, final.choices[0].finish_reason, getattr(final, "usage", None))
    result["chunks"] = chunks
    return result


if __name__ == "__main__":
    td.serve(call, supports=["thinking", "result_parts", "round_routes"])
