"""tooltape driver for the OpenAI Agents SDK's models (`openai-agents`): OpenAIChatCompletionsModel
and OpenAIResponsesModel over one `AsyncOpenAI` client, called through the SDK's `Model`
interface (`get_response`, `stream_response`: what `Runner` calls each turn; no agent loop, so
tooltape sends the tool results). The same code for both models: input as the SDK's Responses
input items, tools as `FunctionTool`s with a JSON Schema, tool_choice, the parallel switch and
max_tokens as `ModelSettings`; the streamed result is the stream's `response.completed`
response, as `Runner` builds its ModelResponse. Tracing is off (set_tracing_disabled).

Tool results given as parts (`result_parts`) are `function_call_output` items whose `output` is
a list of `input_text` / `input_image` items (the SDK's input is Responses items for both
models). A trial continued by `previous_response_id` (`continue_with`, the Responses model) sends
only the round's results with `previous_response_id` (the Model interface's own argument, which
`Runner.run(previous_response_id=…)` hands it), the last answer's `response_id`. Hosted web
search (`hosted`) is the SDK's `WebSearchTool` (documented for the Responses model only: not
expressible on the Chat model), REQUIRED grounding `tool_choice="web_search"`, a choice the SDK
documents for its hosted tool.

Thinking (`thinking`) is `ModelSettings(reasoning=Reasoning(effort="low"))` (the SDK's setting for
reasoning models, the same for both models: the Chat model sends it as `reasoning_effort`; an
effort, not a token budget, so the budget is not carried). Across rounds, thinking on or off, the
driver keeps the history a `Runner` keeps (`RunResult.to_input_list()`: the input, then each model response's
`to_input_items()`): the answer's ModelResponse turned into input items by the SDK's own
`to_input_items()` (for a stream, the ModelResponse of its `response.completed` response, as
`Runner` builds it), reasoning items with their `encrypted_content` included, handed over as the
result's `reasoning` (`[{"openai_agents": items}]`) and taking the place of the protocol's neutral
copy of that assistant turn.

Tools from an MCP server (`mcp`, issue 42 item 7) come through the SDK's own MCP client as its
MCP guide (docs/mcp.md, "Streamable HTTP MCP servers") shows: `MCPServerStreamableHttp(params={"url":
…})`, connected with `async with`, on an `Agent(mcp_servers=[server])`, whose `get_mcp_tools()`
(agents/agent.py: "Fetches the available tools from the MCP servers", what `get_all_tools()` and so
the Runner call each turn) lists them and makes the SDK's `FunctionTool`s of them through
`MCPUtil.get_all_function_tools` / `MCPUtil.to_function_tool` (agents/mcp/util.py); those go to the
model in place of the trial's `tools`. `strict` is the agent's documented
`mcp_config={"convert_schemas_to_strict": True}` (agents/agent.py MCPConfig: "attempt to convert the
MCP schemas to strict-mode schemas", best effort). Each result is the library's own, as the Runner
makes it (agents/run_internal/tool_execution.py): the tool's `on_invoke_tool(ToolContext, arguments)`
once per call id with the arguments of the function call the SDK returned (MCPUtil.invoke_mcp_tool
calls the server; a failure becomes the SDK's default `default_tool_error_function` text; a server
answer with `isError` is passed on as its content), then `ItemHelpers.tool_call_output_item(call,
output)` makes the `function_call_output` item that takes the place of the result tooltape wrote.
The server is built with its defaults (`use_structured_content=False`: the content blocks, not
`structuredContent`)."""

import asyncio
import contextlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td
from agents import (
    Agent,
    FunctionTool,
    ItemHelpers,
    RunContextWrapper,
    ProgrammaticToolCallingTool,
    ToolSearchTool,
    WebSearchTool,
    ModelSettings,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    set_tracing_disabled,
    tool_namespace,
)
from agents.exceptions import ModelBehaviorError
from agents.tool_context import ToolContext
from agents.items import ModelResponse
from agents.mcp import MCPServerStreamableHttp
from agents.usage import Usage
from agents.models.interface import ModelTracing
from openai import AsyncOpenAI
from openai.types.responses import ResponseFunctionToolCall
from openai.types.shared import Reasoning

set_tracing_disabled(True)


def model_of(trial, client):
    if trial["api"] == "openai-chat":
        return OpenAIChatCompletionsModel(model=trial["model"], openai_client=client)
    if trial["api"] == "openai-responses":
        return OpenAIResponsesModel(model=trial["model"], openai_client=client)
    raise td.Unsupported(["api " + trial["api"]])


async def never_invoked(ctx, arguments):
    raise RuntimeError("tooltape runs no tool in the driver")


def tools_of(trial):
    if trial["api"] != "openai-responses" and any(t.get("allowed_callers") for t in trial["tools"]):
        raise td.Unsupported(
            ["allowed_callers"],
            cite="openai-agents 0.24.0 agents/tool.py _normalize_tool_allowed_callers: 'the caller permission list for an "
            "eligible Responses tool'; the Chat Completions model has no field for it",
        )
    hosted = []
    for h in trial.get("hosted") or []:
        if h.get("type") == "tool_search" and h.get("variant") == "tool_search" and trial["api"] == "openai-responses":
            # ToolSearchTool: the hosted Responses search over the deferred tools.
            hosted.append(ToolSearchTool())
            continue
        if h.get("type") == "programmatic" and h.get("variant") == "programmatic_tool_calling" and trial["api"] == "openai-responses":
            # ProgrammaticToolCallingTool: the Responses runner of the functions' programs.
            hosted.append(ProgrammaticToolCallingTool())
            continue
        if h.get("type") != "web_search" or trial["api"] != "openai-responses":
            # WebSearchTool and ToolSearchTool are documented for the Responses model only.
            raise td.Unsupported(["hosted " + str(h.get("type")) + " " + str(h.get("variant"))])
        hosted.append(WebSearchTool())
    functions = [
        FunctionTool(
            name=t["name"],
            # None when the tool has none, as `@function_tool` makes it for a function without a
            # docstring.
            description=t.get("description"),
            params_json_schema=td.parameters(trial, t),
            on_invoke_tool=never_invoked,
            strict_json_schema=bool(trial.get("strict")),
            defer_loading=bool(t.get("defer_loading")),
            # FunctionTool.allowed_callers (ToolCaller: "direct", "programmatic"), class 30.
            allowed_callers=t.get("allowed_callers") or None,
        )
        for t in trial["tools"]
    ]
    # A tool in a namespace goes through `tool_namespace()`, which asks a description of the
    # namespace; the trial has none, so the namespace's name is its description.
    spaces = {}
    for t, f in zip(trial["tools"], functions):
        if t.get("namespace"):
            spaces.setdefault(t["namespace"], []).append(f)
    for name, members in spaces.items():
        for old, new in zip(members, tool_namespace(name=name, description=name, tools=members)):
            functions[functions.index(old)] = new
    return hosted + functions


def function_call(messages, call_id):
    """The function call the SDK returned for `call_id` (the last assistant turn that has it), as
    the ResponseFunctionToolCall the Runner hands its tool."""
    for m in reversed(messages):
        if m["role"] != "assistant":
            continue
        for item in td.kept_turn(m, "openai_agents") or []:
            if item.get("type") == "function_call" and item.get("call_id") == call_id:
                return ResponseFunctionToolCall.model_validate(item)
        for c in m.get("tool_calls") or []:
            if c.get("id") == call_id:
                return ResponseFunctionToolCall(
                    type="function_call", call_id=call_id, name=c.get("name"), arguments=td.arguments_text(c.get("arguments"))
                )
    raise ValueError(f"no call {call_id!r} among the calls handed over")


async def mcp_round(trial, messages, stack):
    """The FunctionTools the SDK makes of the MCP server's tools, and the output items of the
    round's calls (call id → function_call_output), each call id called once in the trial."""
    server = await stack.enter_async_context(MCPServerStreamableHttp(params={"url": trial["mcp"]["url"]}))
    agent = Agent(name="tooltape", mcp_servers=[server], mcp_config={"convert_schemas_to_strict": bool(trial.get("strict"))})
    tools = await agent.get_mcp_tools(RunContextWrapper(context=None))
    by_name = {t.name: t for t in tools}
    done = td.mcp_answers(trial)
    for m in messages:
        call_id = m.get("call_id")
        if m["role"] != "tool" or call_id in done:
            continue
        call = function_call(messages, call_id)
        ctx = ToolContext(
            context=None, tool_name=call.name, tool_call_id=call_id, tool_arguments=call.arguments, tool_call=call, agent=agent
        )
        output = await by_name[call.name].on_invoke_tool(ctx, call.arguments)
        done[call_id] = ItemHelpers.tool_call_output_item(call, output)
    return tools, done


def settings_of(trial):
    s = {}
    choice = trial.get("tool_choice")
    if any(h.get("grounding") == "required" for h in trial.get("hosted") or []):
        if choice not in (None, "auto"):
            raise td.Unsupported(["hosted grounding required with tool_choice"])
        choice = "web_search"
    if isinstance(choice, dict) and "name" in choice:
        s["tool_choice"] = choice["name"]
    elif isinstance(choice, dict):
        raise td.Unsupported(["tool_choice allowed"])
    elif choice is not None:
        s["tool_choice"] = choice
    if trial.get("parallel_tool_calls") is not None:
        s["parallel_tool_calls"] = trial["parallel_tool_calls"]
    if trial.get("max_tokens") is not None:
        s["max_tokens"] = trial["max_tokens"]
    if trial.get("thinking") is not None:
        s["reasoning"] = Reasoning(effort="low")
    if trial.get("compaction"):
        if trial["api"] != "openai-responses":
            raise td.Unsupported(["compaction"], cite=UNSUPPORTED["compaction on chat"])
        # Server-side compaction, ModelSettings.context_management as the SDK documents it.
        s["context_management"] = [{"type": "compaction"}]
    return ModelSettings(**s)


def kept(response):
    """The ModelResponse's input items (as the Runner's history keeps them), for the next round."""
    return {"reasoning": [{"openai_agents": json.loads(json.dumps(response.to_input_items(), default=str))}]}


async def call_async(trial, messages):
    async with contextlib.AsyncExitStack() as stack:
        return await call_in(trial, messages, stack)


async def call_in(trial, messages, stack):
    client = AsyncOpenAI(base_url=trial["base_url"] + "/v1", api_key=trial["api_key"], max_retries=0)
    model = model_of(trial, client)
    previous, sent = td.continued(trial, messages)
    # An assistant turn the SDK answered is the input items its ModelResponse gave.
    items, instructions = td.responses_input(sent, parts=True, kept="openai_agents")
    if trial.get("mcp"):
        mcp_tools, outputs = await mcp_round(trial, messages, stack)
        # Hosted tools as in any trial, beside the MCP server's function tools.
        tools = tools_of(dict(trial, tools=[])) + mcp_tools
        # The results tooltape wrote give way to the SDK's own output items.
        items = [outputs[i["call_id"]] if i.get("type") == "function_call_output" else i for i in items]
    else:
        tools = tools_of(trial)
    args = (instructions, items, settings_of(trial), tools, None, [], ModelTracing.DISABLED)
    kw = dict(previous_response_id=previous, conversation_id=None, prompt=None)
    try:
        if not trial["stream"]:
            r = await model.get_response(*args, **kw)
            # A ModelResponse has the output items and usage (no status: no finish to report).
            result = td.responses_result({"output": r.output})
            result["usage"] = {"input_tokens": r.usage.input_tokens, "output_tokens": r.usage.output_tokens}
            if r.response_id:
                result["response_id"] = r.response_id
            return dict(result, **kept(r))
        chunks, final = [], None
        async for ev in model.stream_response(*args, **kw):
            doc = td.responses_event(ev)
            if doc:
                chunks.append(doc)
            if td.get(ev, "type") == "response.completed":
                final = ev.response
        if final is None:
            # What Runner raises for a stream without `response.completed` (run_loop.py).
            raise ModelBehaviorError("Model did not produce a final response!")
        result = td.responses_result(final)
        if td.get(final, "id"):
            result["response_id"] = final.id
        result["chunks"] = chunks
        return dict(result, **kept(ModelResponse(output=final.output, usage=Usage(), response_id=final.id)))
    finally:
        await client.close()


def call(trial, messages):
    return asyncio.run(call_async(trial, messages))


# Why each entry this driver answers `unsupported` for is not expressible through openai-agents
# 0.24.0 (its installed source: agents/).
UNSUPPORTED = {
    "caller_tools": (
        "DRIVER GAP, not a library limit: openai-agents 0.24.0 agents/tool.py CustomTool is the SDK's own custom (freeform/grammar) tool; "
        "this driver does not yet build one from the trial's wire form"
    ),
    "round_routes": (
        "openai-agents 0.24.0 agents/models/interface.py Model: this driver calls one Model (OpenAIChatCompletionsModel or "
        "OpenAIResponsesModel) over one OpenAI client; other providers go through the LiteLLM extension, not installed here "
        "(clients/openai-agents.toml)"
    ),
    "compaction on chat": (
        "openai-agents 0.24.0 agents/model_settings.py ModelSettings.context_management: 'Context management entries for OpenAI Responses "
        "API requests' (agents/models/openai_chatcompletions.py does not send it)"
    ),
    "eager_input_streaming": (
        "openai-agents 0.24.0 agents/tool.py FunctionTool: no eager_input_streaming (an Anthropic tool field; the SDK's models here speak "
        "OpenAI's APIs only)"
    ),
    "hosted tool_search": (
        "openai-agents 0.24.0 agents/tool.py ToolSearchTool: 'A hosted Responses API tool' (OpenAI's tool_search, the Responses model "
        "only); Anthropic's tool_search_tool_regex/bm25_20251119 are no SDK tool"
    ),
    "hosted": (
        "openai-agents 0.24.0 agents/tool.py WebSearchTool: 'Currently only supported with OpenAI models, using the Responses API'; "
        "agents/models/chatcmpl_converter.py Converter.tool_to_openai: 'Hosted tools are not supported with the ChatCompletions API'"
    ),
    "hosted grounding required with tool_choice": (
        "openai-agents 0.24.0 agents/model_settings.py ModelSettings.tool_choice: one choice; forcing the web search "
        "(tool_choice='web_search') leaves no room for the trial's own tool_choice"
    ),
    "tool_choice allowed": (
        "openai-agents 0.24.0 agents/model_settings.py ToolChoice: 'auto' | 'required' | 'none' | a tool name | MCPToolChoice, which "
        "agents/models/openai_responses.py Converter.convert_tool_choice maps; no allowed-tools subset"
    ),
    "api": (
        "this driver's routes are OpenAI Chat and Responses (clients/openai-agents.toml); the SDK's OpenAI models speak no other wire "
        "format"
    ),
}


if __name__ == "__main__":
    td.serve(
        call,
        supports=[
            "thinking",
            "result_parts",
            "continue_with",
            "hosted",
            "defer_loading",
            "namespace",
            "compaction",
            "allowed_callers",
            "mcp",
        ],
        unsupported=UNSUPPORTED,
    )
