"""tooltape driver for pydantic-ai's direct model requests (`pydantic_ai.direct.model_request_sync`
and `model_request_stream_sync`, no agent loop): OpenAIChatModel, OpenAIResponsesModel,
AnthropicModel and GoogleModel, tools as `ToolDefinition`s, tool_choice and the parallel switch
as `ModelSettings`; the streamed result is the stream's final `ModelResponse`. On the Gemini route
the `ModelResponse` itself (where GoogleModel keeps Gemini's thought signatures, in its parts'
`provider_details`) is handed over as the result's `reasoning`, in the JSON form
`ModelMessagesTypeAdapter` stores message history in, and goes back as is in the next round's
history, as an agent's message history keeps it."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td  # noqa: E402
from pydantic_ai import direct  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters  # noqa: E402
from pydantic_ai.tools import ToolDefinition  # noqa: E402


def model_of(trial):
    api, key, base, name = trial["api"], trial["api_key"], trial["base_url"], trial["model"]
    if api in ("openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        provider = OpenAIProvider(base_url=base + "/v1", api_key=key)
        cls = OpenAIChatModel if api == "openai-chat" else OpenAIResponsesModel
        return cls(name, provider=provider)
    if api == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel(name, provider=AnthropicProvider(base_url=base, api_key=key))
    if api == "gemini":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return GoogleModel(name, provider=GoogleProvider(api_key=key, base_url=base))
    raise td.Unsupported(["api " + api])


def history_of(messages):
    out, pending = [], []

    def flush():
        if pending:
            out.append(ModelRequest(parts=list(pending)))
            pending.clear()

    for m in messages:
        role, content = m["role"], m.get("content") or ""
        if role == "system":
            pending.append(SystemPromptPart(content=content))
        elif role == "user":
            pending.append(UserPromptPart(content=content))
        elif role == "tool":
            pending.append(ToolReturnPart(tool_name=m.get("name") or "", content=content, tool_call_id=m.get("call_id")))
        elif (m.get("reasoning") or [{}])[0].get("pydantic_ai"):
            # The library's own response, as the caller's message history keeps it.
            flush()
            out += ModelMessagesTypeAdapter.validate_python(m["reasoning"][0]["pydantic_ai"])
        else:
            flush()
            parts = [TextPart(content=m["content"])] if m.get("content") else []
            parts += [
                ToolCallPart(tool_name=c.get("name"), args=c.get("arguments"), tool_call_id=c.get("id"))
                for c in m.get("tool_calls") or []
            ]
            out.append(ModelResponse(parts=parts))
    flush()
    return out


def settings_of(trial):
    s = {}
    choice = trial.get("tool_choice")
    if isinstance(choice, dict) and "name" in choice:
        s["tool_choice"] = [choice["name"]]
    elif isinstance(choice, dict) and choice.get("mode") == "required":
        s["tool_choice"] = list(choice["allowed"])  # a call to one of these
    elif isinstance(choice, dict):
        raise td.Unsupported(["tool_choice allowed-auto"])
    elif choice is not None:
        s["tool_choice"] = choice
    if trial.get("parallel_tool_calls") is not None:
        s["parallel_tool_calls"] = trial["parallel_tool_calls"]
    if trial.get("max_tokens") is not None:
        s["max_tokens"] = trial["max_tokens"]
    return s


def parameters_of(trial):
    tools = [
        ToolDefinition(
            name=t["name"],
            description=t.get("description"),
            parameters_json_schema=t["parameters"],
            strict=True if trial.get("strict") else None,
        )
        for t in trial["tools"]
    ]
    return ModelRequestParameters(function_tools=tools, allow_text_output=True)


def kept(trial, result, r):
    """The result, with the response itself for the next round on the Gemini route."""
    if trial["api"] == "gemini" and result["calls"]:
        result["reasoning"] = [{"pydantic_ai": ModelMessagesTypeAdapter.dump_python([r], mode="json")}]
    return result


def result_of(r):
    calls = [{"id": p.tool_call_id, "name": p.tool_name, "arguments": p.args} for p in r.parts if isinstance(p, ToolCallPart)]
    text = "".join(p.content for p in r.parts if isinstance(p, TextPart))
    usage = {"input_tokens": r.usage.input_tokens, "output_tokens": r.usage.output_tokens} if r.usage else None
    finish = getattr(r, "finish_reason", None)
    return {"calls": calls, "text": text or None, "finish": finish, "usage": usage}


def call(trial, messages):
    model = model_of(trial)
    kw = dict(model_settings=settings_of(trial), model_request_parameters=parameters_of(trial))
    history = history_of(messages)
    if not trial["stream"]:
        r = direct.model_request_sync(model, history, **kw)
        return kept(trial, result_of(r), r)
    chunks = []
    with direct.model_request_stream_sync(model, history, **kw) as stream:
        for ev in stream:
            if isinstance(ev, PartStartEvent) and isinstance(ev.part, ToolCallPart):
                head = {"index": ev.index, "id": ev.part.tool_call_id, "name": ev.part.tool_name}
                if ev.part.args:
                    head["arguments"] = ev.part.args
                chunks.append({"calls": [head]})
            elif isinstance(ev, PartStartEvent) and isinstance(ev.part, TextPart) and ev.part.content:
                chunks.append({"text": ev.part.content})
            elif isinstance(ev, PartDeltaEvent) and isinstance(ev.delta, ToolCallPartDelta):
                d = {"index": ev.index}
                if ev.delta.tool_name_delta:
                    d["name"] = ev.delta.tool_name_delta
                if ev.delta.args_delta is not None:
                    d["arguments"] = ev.delta.args_delta
                chunks.append({"calls": [d]})
            elif isinstance(ev, PartDeltaEvent) and isinstance(ev.delta, TextPartDelta):
                chunks.append({"text": ev.delta.content_delta})
        final = stream.response
    result = result_of(final)
    result["chunks"] = chunks
    return kept(trial, result, final)


if __name__ == "__main__":
    td.serve(call, supports=["round_routes"])
