"""tooltape driver for pydantic-ai's direct model requests (`pydantic_ai.direct.model_request_sync`
and `model_request_stream_sync`, no agent loop): OpenAIChatModel, OpenAIResponsesModel,
AnthropicModel and GoogleModel, tools as `ToolDefinition`s, tool_choice and the parallel switch
as `ModelSettings`; the streamed result is the stream's final `ModelResponse`. On every route the
`ModelResponse` itself (where each model class keeps its provider's state: `ThinkingPart`s with
their signatures, Responses reasoning items, Gemini's thought signatures in its parts'
`provider_details`, the call ids) is handed over as the result's `reasoning`, in the JSON form
`ModelMessagesTypeAdapter` stores message history in, and goes back as is in the next round's
history, as an agent's message history keeps it; the results are `ToolReturnPart`s, one flagged as
an error with `outcome='failed'` (what an agent run records for a tool that raised).

Tool results given as parts (`result_parts`) are a `ToolReturnPart` whose `content` is the list of
the parts (text as `str`, an image as `BinaryContent`, a URL as `ImageUrl`), the multimodal tool
return content pydantic-ai documents; hosted web search (`hosted`) is the portable native
`WebSearchTool` in `ModelRequestParameters.native_tools`. REQUIRED grounding is not expressible:
`tool_choice` names function and output tools only. A trial continued by `previous_response_id`
(`continue_with`, the Responses model) sets the Responses model's documented
`openai_previous_response_id='auto'`; across rounds the driver keeps the history a caller keeps
(the requests as built, the `ModelResponse`s as returned), so pydantic-ai chains to the last
answer's `provider_response_id` and leaves the messages before it out.

Thinking (`thinking`) is the unified `ModelSettings` field `thinking=True` (pydantic_ai/settings.py:
"Enable thinking with the provider's default effort level", the one spelling for every model
class); it takes no token budget (levels or `True` only), so the trial's budget is not carried.
A model whose pydantic-ai profile has no thinking (`supports_thinking`,
e.g. `gpt-4.1-mini`, for which pydantic-ai leaves the setting out of the request) cannot express it.

Tools from an MCP server (`mcp`, issue 42 item 7) come through pydantic-ai's own MCP client, the
`MCPToolset` (pydantic_ai/mcp.py, `pydantic-ai-slim[mcp]`; `MCPServerStreamableHTTP` was removed in
v2 for it, `_REMOVED_IN_V2`: "use `MCPToolset`, which picks the transport from its arguments"),
built from the server's URL as its docstring's first example does (`MCPToolset('http://…/mcp')`),
and used through the documented toolset interface an agent run uses (docs/toolsets.md,
pydantic_ai/toolsets/abstract.py `AbstractToolset`): `get_tools(ctx)` lists the server's tools and
makes their `ToolDefinition`s (`MCPToolset.get_tools`: name, description, `parameters_json_schema`
the input schema), which this driver's direct request takes as its `function_tools`, in place of the
trial's `tools`; with `strict`, through `toolset.prepared(…)` setting `strict=True` on each
definition (docs/toolsets.md "Preparing tool definitions", the `ToolDefinition.strict` the non-MCP
trials set). Each tool result is the library's own: `toolset.call_tool(name, args, ctx, tool)` once
per call id with the arguments of the `ToolCallPart` pydantic-ai returned (`args_as_dict()`), its
return value the `ToolReturnPart`'s content as the agent's tool execution builds it
(_tool_execution.py `build_tool_return_part`). A server answer with `isError` raises `ModelRetry`
under the toolset's default `tool_error_behavior='retry'` (mcp.py `_call_tool_checked`), which an
agent run answers with the call's `ToolReturnPart(outcome='retried')` holding the message
(_output.py `build_retried_tool_return`: "the exact result the model receives when the agent loop
handles the failure"; messages.py: the documented replacement of `RetryPromptPart`); `ToolFailed`
(`tool_error_behavior='failed'`) would be `outcome='failed'`. The run context is the public
`RunContext(deps=None, model=…, usage=RunUsage())`."""

import asyncio
import base64

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td
from dataclasses import replace

from pydantic_ai import RunContext, direct
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    RetryInfo,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturn,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.native_tools import WebSearchTool
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RunUsage


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


def return_content(m):
    """A tool result's content: its parts as multimodal tool return content when given as parts."""
    if not m.get("parts"):
        return m.get("content") or ""
    return td.convert_parts(
        m["parts"],
        text=lambda t: t,
        image=lambda mime, data: BinaryContent(data=base64.b64decode(data or ""), media_type=mime),
        image_url=lambda url: ImageUrl(url=url),
    )


def history_of(messages, returns=None):
    """The protocol's messages as pydantic-ai's message history; `returns` (call id → ToolReturnPart)
    holds the library's own results of calling MCP tools, which take the place of the results
    tooltape wrote."""
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
        elif role == "tool" and returns is not None:
            pending.append(returns[m.get("call_id")])
        elif role == "tool":
            # A result the caller flags as an error is a failed return (messages.py
            # ToolReturnPart.outcome: 'failed', "the tool raised an error during execution", which
            # pydantic-ai maps to the provider's native error channel: Anthropic `is_error`, Gemini
            # `response.error`).
            outcome = "failed" if m.get("is_error") else "success"
            pending.append(
                ToolReturnPart(tool_name=m.get("name") or "", content=return_content(m), tool_call_id=m.get("call_id"), outcome=outcome)
            )
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


class Conversation:
    """The message history a caller keeps for one trial: the requests as built, the
    ModelResponses as pydantic-ai returned them. A round whose `messages` extend the last round's
    (its assistant turn and the tool results appended) is a follow-up; anything else starts anew."""

    name = None
    seen = []
    history = []

    @classmethod
    def for_round(cls, trial, messages, returns=None):
        n = len(cls.seen)
        if trial["name"] == cls.name and len(messages) > n and messages[:n] == cls.seen:
            # The protocol's neutral copy of the answer is skipped: the ModelResponse itself is
            # in the history already. Then the tool results.
            cls.history.extend(history_of([m for m in messages[n:] if m["role"] != "assistant"], returns))
        else:
            cls.name, cls.history = trial["name"], history_of(messages, returns)
        cls.seen = list(messages)
        return cls.history


def settings_of(trial):
    s = {}
    if trial.get("thinking") is not None:
        s["thinking"] = True
    if trial.get("continue_with") == "previous_response_id":
        s["openai_previous_response_id"] = "auto"
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
    if any(t.get("eager_input_streaming") for t in trial["tools"]):
        # AnthropicModelSettings.anthropic_eager_input_streaming: every tool eager (the trial's
        # among them), the one switch pydantic-ai documents.
        if trial["api"] != "anthropic":
            raise td.Unsupported(["eager_input_streaming on " + trial["api"]])
        s["anthropic_eager_input_streaming"] = True
    if trial.get("compaction"):
        # Server-side compaction, each model class's documented setting.
        if trial["api"] == "openai-responses":
            s["openai_context_management"] = [{"type": "compaction"}]
        elif trial["api"] == "anthropic":
            s["anthropic_context_management"] = {"edits": [{"type": "compact_20260112"}]}
        else:
            raise td.Unsupported(["compaction on " + trial["api"]])
    return s


def parameters_of(trial, mcp_tools=None):
    """The request's tools: the trial's as ToolDefinitions, or those pydantic-ai's MCP client made."""
    tools = [
        ToolDefinition(
            name=t["name"],
            description=t.get("description"),
            parameters_json_schema=t["parameters"],
            strict=True if trial.get("strict") else None,
        )
        for t in trial["tools"]
    ]
    if mcp_tools is not None:
        tools = mcp_tools
    native = []
    for h in trial.get("hosted") or []:
        if h.get("type") != "web_search" or h.get("grounding") == "required":
            # tool_choice names function and output tools only: a native tool cannot be forced.
            raise td.Unsupported(["hosted " + str(h.get("type")) + " " + str(h.get("grounding"))])
        native.append(WebSearchTool())
    return ModelRequestParameters(function_tools=tools, native_tools=native, allow_text_output=True)


def call_part(messages, call_id):
    """The ToolCallPart pydantic-ai returned for `call_id` (the last assistant turn that has it)."""
    for m in reversed(messages):
        if m["role"] != "assistant":
            continue
        kept = (m.get("reasoning") or [{}])[0].get("pydantic_ai")
        for r in ModelMessagesTypeAdapter.validate_python(kept) if kept else []:
            for p in getattr(r, "parts", []):
                if isinstance(p, ToolCallPart) and p.tool_call_id == call_id:
                    return p
        for c in m.get("tool_calls") or []:
            if c.get("id") == call_id:
                return ToolCallPart(tool_name=c.get("name"), args=c.get("arguments"), tool_call_id=call_id)
    raise ValueError(f"no call {call_id!r} among the calls handed over")


async def mcp_round(trial, messages, model):
    """The tool definitions pydantic-ai's MCP client makes of the server's tools, and the results of
    the round's calls (call id → ToolReturnPart), each call id called once in the trial."""
    from pydantic_ai.mcp import MCPToolset

    toolset = MCPToolset(trial["mcp"]["url"])
    if trial.get("strict"):
        toolset = toolset.prepared(lambda ctx, defs: [replace(d, strict=True) for d in defs])
    ctx = RunContext(deps=None, model=model, usage=RunUsage())
    done = td.mcp_answers(trial)
    async with toolset:
        tools = await toolset.get_tools(ctx)
        for m in messages:
            call_id = m.get("call_id")
            if m["role"] != "tool" or call_id in done:
                continue
            call = call_part(messages, call_id)
            kw = dict(tool_name=call.tool_name, tool_call_id=call_id)
            try:
                value = await toolset.call_tool(
                    call.tool_name,
                    call.args_as_dict(raise_if_invalid=True),
                    replace(ctx, tool_name=call.tool_name, tool_call_id=call_id),
                    tools[call.tool_name],
                )
                if isinstance(value, ToolReturn):
                    done[call_id] = ToolReturnPart(content=value.return_value, metadata=value.metadata, **kw)
                else:
                    done[call_id] = ToolReturnPart(content=value, **kw)
            except ModelRetry as e:
                done[call_id] = ToolReturnPart(content=e.message, outcome="retried", retry=RetryInfo(cause="model_retry"), **kw)
            except ToolFailed as e:
                done[call_id] = ToolReturnPart(content=e.message, outcome="failed", **kw)
    return [t.tool_def for t in tools.values()], done


def kept(result, r):
    """The result, with the response itself for the next round (every route alike)."""
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
    if trial.get("thinking") is not None and not (
        model.profile.get("supports_thinking") or model.profile.get("thinking_always_enabled")
    ):
        raise td.Unsupported([f"thinking (pydantic-ai's profile of {trial['model']} has no thinking)"])
    mcp_tools, returns = asyncio.run(mcp_round(trial, messages, model)) if trial.get("mcp") else (None, None)
    kw = dict(model_settings=settings_of(trial), model_request_parameters=parameters_of(trial, mcp_tools))
    # Continued by previous_response_id, the history is the one a caller keeps (pydantic-ai chains
    # only to a ModelResponse it returned, with the requests it was created from); otherwise it is
    # built from the protocol's messages, each answer the ModelResponse as returned (`reasoning`).
    continues = trial.get("continue_with") == "previous_response_id"
    history = Conversation.for_round(trial, messages, returns) if continues else history_of(messages, returns)
    if not trial["stream"]:
        r = direct.model_request_sync(model, history, **kw)
        history.append(r)
        return kept(result_of(r), r)
    chunks = []
    # The indices of function tool call parts: a delta at another index belongs to a native
    # tool's call (the hosted search the provider runs), not the caller's.
    function_parts = set()
    with direct.model_request_stream_sync(model, history, **kw) as stream:
        for ev in stream:
            if isinstance(ev, PartStartEvent) and isinstance(ev.part, ToolCallPart):
                function_parts.add(ev.index)
                head = {"index": ev.index, "id": ev.part.tool_call_id, "name": ev.part.tool_name}
                if ev.part.args:
                    head["arguments"] = ev.part.args
                chunks.append({"calls": [head]})
            elif isinstance(ev, PartStartEvent) and isinstance(ev.part, TextPart) and ev.part.content:
                chunks.append({"text": ev.part.content})
            elif isinstance(ev, PartDeltaEvent) and isinstance(ev.delta, ToolCallPartDelta) and ev.index in function_parts:
                d = {"index": ev.index}
                if ev.delta.tool_name_delta:
                    d["name"] = ev.delta.tool_name_delta
                if ev.delta.args_delta is not None:
                    d["arguments"] = ev.delta.args_delta
                chunks.append({"calls": [d]})
            elif isinstance(ev, PartDeltaEvent) and isinstance(ev.delta, TextPartDelta):
                chunks.append({"text": ev.delta.content_delta})
        final = stream.response
    history.append(final)
    result = result_of(final)
    result["chunks"] = chunks
    return kept(result, final)


# Why each entry this driver answers `unsupported` for is not expressible through pydantic-ai 2.68.0
# (its installed source: pydantic_ai/), by the direct model requests this driver makes.
UNSUPPORTED = {
    "allowed_callers": (
        "pydantic-ai 2.68.0 tools.py ToolDefinition (name, parameters_json_schema, description, strict, sequential, kind, "
        "metadata, timeout, defer_loading, …): no allowed_callers; models/anthropic/_native_tools.py provisions_code_execution "
        "only reads a tool dict's allowed_callers to tell whether Anthropic gives a container (class 30)"
    ),
    "caller_tools": (
        "pydantic-ai 2.68.0 pydantic_ai/tools.py ToolDefinition: function and output tools with a JSON Schema (parameters_json_schema); no "
        "OpenAI custom (freeform/grammar) tool in any model class"
    ),
    "defer_loading": (
        "DRIVER GAP, not a library limit: pydantic-ai 2.68.0 documents tool search as the ToolSearch capability of an Agent "
        "(pydantic_ai/native_tools/_tool_search.py ToolSearchTool: 'Framework-internal: users access tool search via the ToolSearch "
        "capability — do not construct directly'; ToolDefinition.defer_loading, with_native='tool_search'); this driver makes direct model "
        "requests (pydantic_ai.direct), which take no capability"
    ),
    "namespace": (
        "pydantic-ai 2.68.0 pydantic_ai/tools.py ToolDefinition: no namespace field; pydantic_ai/models/openai/_tool_search.py "
        "tool_search_namespace_for_synthesis: 'the flat deferred function tools this adapter emits' (a call's namespace only kept in "
        "provider_details)"
    ),
    "eager_input_streaming on": (
        "pydantic-ai 2.68.0 pydantic_ai/models/anthropic/__init__.py AnthropicModelSettings.anthropic_eager_input_streaming is the "
        "Anthropic model's setting; the other model classes have none (an Anthropic tool field)"
    ),
    "compaction on": (
        "pydantic-ai 2.68.0 documents server-side compaction for the Responses model (pydantic_ai/models/openai/_settings.py "
        "OpenAIResponsesModelSettings.openai_context_management) and the Anthropic model "
        "(AnthropicModelSettings.anthropic_context_management) only; OpenAIChatModel and GoogleModel have no such setting"
    ),
    "hosted": (
        "pydantic-ai 2.68.0 pydantic_ai/settings.py ModelSettings.tool_choice names function and output tools only, so a native tool "
        "(WebSearchTool) cannot be forced (REQUIRED grounding); pydantic_ai/native_tools: no other hosted search for this driver's direct "
        "requests"
    ),
    "tool_choice allowed-auto": (
        "pydantic-ai 2.68.0 pydantic_ai/settings.py ModelSettings.tool_choice: 'auto' | 'none' | 'required' | a list of tool names (a call "
        "to one of them: the allowed subset with mode required); no allowed subset the model may also answer without a call"
    ),
    "thinking": (
        "pydantic-ai 2.68.0 pydantic_ai/profiles ModelProfile.supports_thinking: the model's profile has no thinking, and pydantic-ai "
        "leaves ModelSettings.thinking out of the request for it"
    ),
    "api": (
        "this driver's routes are OpenAI Chat and Responses, Anthropic and Gemini (clients/pydantic-ai.toml), each through its pydantic-ai "
        "model class"
    ),
}


if __name__ == "__main__":
    td.serve(
        call,
        supports=[
            "thinking",
            "result_parts",
            "hosted",
            "continue_with",
            "round_routes",
            "eager_input_streaming",
            "compaction",
            "mcp",
        ],
        unsupported=UNSUPPORTED,
    )
