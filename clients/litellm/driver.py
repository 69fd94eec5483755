"""tooltape driver for the LiteLLM Python SDK: `litellm.completion` (the OpenAI Chat shape in and
out) to each provider by the model prefix of the route's options; streamed results are the
chunks LiteLLM yields, accumulated by `litellm.stream_chunk_builder` (its documented helper)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td  # noqa: E402

import litellm  # noqa: E402


def call(trial, messages):
    opts = trial.get("options") or {}
    kw = dict(
        model=opts.get("prefix", "openai/") + trial["model"],
        api_base=trial["base_url"] + opts.get("base_suffix", ""),
        api_key=trial["api_key"],
        messages=td.chat_messages(messages),
        num_retries=0,
        **td.chat_kwargs(trial),
    )
    try:
        if not trial["stream"]:
            r = litellm.completion(**kw)
            return td.chat_message_result(r.choices[0].message, r.choices[0].finish_reason, getattr(r, "usage", None))
        raw, chunks = [], []
        for chunk in litellm.completion(stream=True, stream_options={"include_usage": True}, **kw):
            raw.append(chunk)
            doc = td.chat_chunk(chunk)
            if doc:
                chunks.append(doc)
    except litellm.UnsupportedParamsError as e:
        # LiteLLM refuses a parameter the provider has no knob for (unless drop_params is set).
        raise td.Unsupported([str(e).splitlines()[0][:200]])
    final = litellm.stream_chunk_builder(raw, messages=kw["messages"])
    if final is None:
        result = {"calls": [], "text": None, "finish": None, "usage": None}
    else:
        result = td.chat_message_result(final.choices[0].message, final.choices[0].finish_reason, getattr(final, "usage", None))
    result["chunks"] = chunks
    return result


if __name__ == "__main__":
    td.serve(call, supports=["round_routes"])
