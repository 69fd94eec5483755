"""tooltape driver for LlamaIndex's LLM classes (`llama-index-llms-openai`, `-anthropic`,
`-google-genai`): OpenAI, OpenAIResponses, Anthropic and GoogleGenAI, each called through the
portable `FunctionCallingLLM` API with the same code: `chat_with_tools` /
`stream_chat_with_tools` (`allow_parallel_tool_calls`, `tool_required`), the calls read with
`get_tool_calls_from_response`. Tools are `FunctionTool`s whose `fn_schema` is a pydantic model
carrying the trial's JSON Schema; the history is `ChatMessage`s, results as `role="tool"`
messages with `tool_call_id`, as LlamaIndex's FunctionAgent and its tool-calling examples keep
them. Across rounds the driver keeps, on every route, the history a caller keeps: the
`ChatMessage` the library answered appended as is (`chat_history.append(resp.message)`, its
blocks and `additional_kwargs`, where each class keeps its provider's state: thinking blocks with
their signatures, Gemini's thought signatures), then the tool results. Streamed, each chunk
reports the text delta and the calls as the yielded response holds them so far (objects: each
replaces the one before); the last response's message is the one kept.

Tool results given as parts (`result_parts`) are the tool message's content blocks (`TextBlock`,
`ImageBlock` with the image's bytes and MIME type or its URL), LlamaIndex's one multimodal message
shape for every LLM class.

Thinking (`thinking`) is each class's documented switch, with the trial's budget: Anthropic's
`thinking_dict={"type": "enabled", "budget_tokens": N}` (the integration's docs, "Thinking") and
GoogleGenAI's `generation_config`, google-genai's `GenerateContentConfig` with
`thinking_config=ThinkingConfig(thinking_budget=N)` (the config then carries the output limit
too, which the constructor's `max_tokens` no longer sets). LlamaIndex has no portable spelling.
OpenAI's `reasoning_effort` and OpenAIResponses' `reasoning_options` are sent only for the
models in the integration's reasoning-model table (`O1_MODELS`; `gpt-4.1-mini` is not one, and
the setting would be left out silently): not expressible there.

Tools through MCP (`mcp`, the `mcp-API` routes): `llama-index-tools-mcp` (0.6.0, with `mcp` 2.3.0),
as its README (https://pypi.org/project/llama-index-tools-mcp/) and LlamaIndex's MCP guide
(https://developers.llamaindex.ai/python/framework/module_guides/mcp/llamaindex_mcp: "Streamable
HTTP", then the tools given to a FunctionAgent) show its users: `McpToolSpec(client=BasicMCPClient(URL))`
and `await spec.to_tool_list_async()`, the library's own `FunctionTool`s (llama_index/tools/mcp/base.py
`to_tool_list_async`: each MCP tool's `input_schema` rebuilt as a pydantic model,
`create_model_from_json_schema`, whose JSON Schema is what the LLM classes send), handed to
`chat_with_tools` as on every route (the trial's `tools` only list what the server serves). A
call is run as LlamaIndex's FunctionAgent runs one (llama_index/core/agent/workflow/base_agent.py
`call_tool` / `_call_tool`): the tool named by the response's `ToolSelection`, `await
tool.acall(**tool_kwargs)`, an exception becoming `ToolOutput(content=str(e), is_error=True)`, a
name no tool has `Tool NAME not found…`; the result goes back as FunctionAgent's
`handle_tool_call_results` writes it, `ChatMessage(role="tool", blocks=tool_output.blocks,
additional_kwargs={"tool_call_id": …})`, in place of tooltape's, each call once in a trial (kept by
call id for the later rounds). What the blocks carry is the library's: the MCP tool's function
returns the `CallToolResult` itself (base.py `_create_tool_fn`), which `FunctionTool.acall`
turns into `[TextBlock(text=str(raw_output))]` (llama_index/core/tools/function_tool.py
`_parse_tool_output`: anything but LlamaIndex blocks, nodes or documents is `str()`-ed). The
model is called as on the other routes (`chat_with_tools` / `stream_chat_with_tools`); the MCP
side runs on one event loop kept for the driver process."""

import base64
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock, ToolCallBlock
from llama_index.core.tools import FunctionTool, ToolOutput
from pydantic import BaseModel


def llm_of(trial):
    api, key, base, name = trial["api"], trial["api_key"], trial["base_url"], trial["model"]
    limit, budget = trial.get("max_tokens"), trial.get("thinking")
    if budget is not None and api in ("openai-chat", "openai-responses"):
        # reasoning_effort / reasoning_options reach the API only for the integration's
        # reasoning models (O1_MODELS), as a level: no budget, and not for this route's model.
        raise td.Unsupported([f"thinking (llama-index-llms-openai sends reasoning only for its O1_MODELS, not {name})"])
    if api == "openai-chat":
        from llama_index.llms.openai import OpenAI

        return OpenAI(model=name, api_key=key, api_base=base + "/v1", max_retries=0, max_tokens=limit)
    if api == "openai-responses":
        from llama_index.llms.openai import OpenAIResponses

        return OpenAIResponses(model=name, api_key=key, api_base=base + "/v1", max_retries=0, max_output_tokens=limit)
    if api == "anthropic":
        from llama_index.llms.anthropic import Anthropic

        kw = {"max_tokens": limit} if limit is not None else {}
        if budget is not None:
            kw["thinking_dict"] = {"type": "enabled", "budget_tokens": budget}
        return Anthropic(model=name, api_key=key, base_url=base, max_retries=0, **kw)
    if api == "gemini":
        from google.genai import types
        from llama_index.llms.google_genai import GoogleGenAI

        kw = {}
        if budget is not None:
            # A generation_config replaces the one the constructor builds: the limit goes in it.
            thinking = types.ThinkingConfig(thinking_budget=budget)
            kw["generation_config"] = types.GenerateContentConfig(max_output_tokens=limit, thinking_config=thinking)
        # Without both limits GoogleGenAI's constructor fetches the model's metadata
        # (models.get), which the simulator upstream does not serve: the model's own limits,
        # as that call would answer them for gemini-3.8-flash.
        return GoogleGenAI(
            model=name,
            api_key=key,
            max_retries=0,
            max_tokens=limit or 65536,
            context_window=1048576,
            http_options=types.HttpOptions(base_url=base),
            **kw,
        )
    raise td.Unsupported(["api " + api])


def schema_model(schema):
    """A pydantic model whose JSON Schema is `schema` (LlamaIndex takes a tool's schema as a model
    and reads it with `model_json_schema()`, ToolMetadata.get_parameters_dict): the schema as
    written, `$ref`s and their `$defs` included, never re-resolved by pydantic."""

    class Arguments(BaseModel):
        @classmethod
        def model_json_schema(cls, *args, **kwargs):
            return json.loads(json.dumps(schema))

    return Arguments


def never_called(**kwargs):
    raise RuntimeError("tooltape runs no tool in the driver")


def tools_of(trial):
    return [
        FunctionTool.from_defaults(
            fn=never_called, name=t["name"], description=t.get("description") or "", fn_schema=schema_model(t["parameters"])
        )
        for t in trial["tools"]
    ]


class Mcp:
    """One trial's MCP side: the FunctionTools the library made of the server's list
    (`td.mcp_tools`), and the tool message each call made (`td.mcp_answers`: each call runs once
    in a trial)."""

    def __init__(self, trial):
        def make(url):
            from llama_index.tools.mcp import BasicMCPClient, McpToolSpec

            return td.run_async(McpToolSpec(client=BasicMCPClient(url)).to_tool_list_async())
        self.tools = td.mcp_tools(trial, make)
        self.results = td.mcp_answers(trial)

    def message(self, m, calls):
        """The tool message of running the call `m` answers (among `calls`, call id to the
        tool's name and arguments as the last response selected them) through its MCP tool, as
        FunctionAgent runs it and writes its result."""
        cid = m.get("call_id")
        if cid not in self.results:
            if cid not in calls:
                raise RuntimeError(f"tooltape's result answers call {cid!r}, which is not among the calls LlamaIndex handed over last")
            name, kwargs = calls[cid]
            tool = next((t for t in self.tools if t.metadata.name == name), None)
            if tool is None:
                output = ToolOutput(
                    content=f"Tool {name} not found. Please select a tool that is available.",
                    tool_name=name,
                    raw_input=kwargs,
                    raw_output=None,
                    is_error=True,
                )
            else:
                try:
                    output = td.run_async(tool.acall(**kwargs))
                except Exception as e:  # FunctionAgent's _call_tool: the error is the tool's output
                    output = ToolOutput(content=str(e), tool_name=name, raw_input=kwargs, raw_output=str(e), is_error=True, exception=e)
            self.results[cid] = ChatMessage(role="tool", blocks=output.blocks, additional_kwargs={"tool_call_id": cid})
        return self.results[cid]


def result_blocks(m):
    """A tool result's parts as content blocks."""
    return td.convert_parts(
        m["parts"],
        text=lambda t: TextBlock(text=t),
        image=lambda mime, data: ImageBlock(image=base64.b64decode(data or ""), image_mimetype=mime),
        image_url=lambda url: ImageBlock(url=url),
    )


def neutral_calls(m):
    """An assistant turn's calls as the protocol gives them: call id to (name, arguments)."""
    return {c.get("id"): (c.get("name"), td.arguments_object(c.get("arguments"))) for c in m.get("tool_calls") or []}


def history_of(messages, mcp=None):
    out, calls = [], {}
    for m in messages:
        role, content = m["role"], m.get("content") or ""
        if role == "tool":
            out.append(tool_message(m) if mcp is None else mcp.message(m, calls))
        elif role == "assistant":
            calls = neutral_calls(m)
            blocks = [TextBlock(text=m["content"])] if m.get("content") else []
            blocks += [
                ToolCallBlock(tool_call_id=c.get("id"), tool_name=c.get("name"), tool_kwargs=td.arguments_object(c.get("arguments")))
                for c in m.get("tool_calls") or []
            ]
            out.append(ChatMessage(role="assistant", blocks=blocks))
        else:
            out.append(ChatMessage(role=role, content=content))
    return out


def tool_message(m):
    extra = {"tool_call_id": m.get("call_id")}
    if m.get("parts"):
        return ChatMessage(role="tool", blocks=result_blocks(m), additional_kwargs=extra)
    return ChatMessage(role="tool", content=m.get("content") or "", additional_kwargs=extra)


class Conversation:
    """The history a caller keeps for one trial. A round whose `messages` extend the last round's
    (the same trial, its assistant turn and tool results appended) is a follow-up: the library's
    `ChatMessage` of the last call (`answered`) is appended in place of the loop's neutral copy of
    the assistant turn, then the round's tool results. Anything else starts a new conversation."""

    name = None
    seen = []
    history = []
    answered = None
    # The calls of the last response, as the library selected them (`ToolSelection`s): call id to
    # (tool name, tool_kwargs), the arguments FunctionAgent calls a tool with.
    selected = {}

    @classmethod
    def for_round(cls, trial, messages, mcp=None):
        n = len(cls.seen)
        follow_up = trial["name"] == cls.name and len(messages) > n and messages[:n] == cls.seen
        if follow_up and cls.answered is not None:
            cls.history.append(cls.answered)
            results = [m for m in messages[n:] if m["role"] == "tool"]
            if mcp is None:
                cls.history += [tool_message(m) for m in results]
            else:
                cls.history += [mcp.message(m, cls.selected) for m in results]
        else:
            cls.name = trial["name"]
            cls.history = history_of(messages, mcp)
        cls.seen, cls.answered, cls.selected = list(messages), None, {}
        return list(cls.history)

    @classmethod
    def answer(cls, llm, r):
        """Keeps the response `r` the library answered for the next round."""
        cls.answered = r.message if r is not None else None
        selections = llm.get_tool_calls_from_response(r, error_on_no_tool_call=False) if r is not None else []
        cls.selected = {s.tool_id: (s.tool_name, s.tool_kwargs) for s in selections}


def options_of(trial):
    kw = {}
    choice = trial.get("tool_choice")
    if choice == "required":
        kw["tool_required"] = True
    elif isinstance(choice, dict) and "allowed" in choice:
        raise td.Unsupported(["tool_choice allowed"])
    elif choice not in (None, "auto"):
        # OpenAI, OpenAIResponses and GoogleGenAI document `tool_choice` on
        # `_prepare_chat_with_tools` (which chat_with_tools hands its keyword arguments): "none",
        # "auto", "required" or a function's name (llms/openai/utils.py resolve_tool_choice: "If
        # tool_choice is a function name string, return the appropriate dict"). Anthropic's has
        # only `tool_required`.
        if trial["api"] == "anthropic":
            raise td.Unsupported(["tool_choice " + (choice if isinstance(choice, str) else "forced")])
        kw["tool_choice"] = choice if isinstance(choice, str) else choice["name"]
    if trial.get("parallel_tool_calls") is not None:
        kw["allow_parallel_tool_calls"] = trial["parallel_tool_calls"]
    if trial.get("strict"):
        raise td.Unsupported(["strict"])
    return kw


def calls_of(llm, r):
    return [
        {"id": s.tool_id, "name": s.tool_name, "arguments": s.tool_kwargs}
        for s in llm.get_tool_calls_from_response(r, error_on_no_tool_call=False)
    ]


def usage_of(r):
    u = td.get(r.raw, "usage") or td.get(r.raw, "usage_metadata")
    if u is None:
        return None
    i = td.get(u, "prompt_tokens", td.get(u, "input_tokens", td.get(u, "prompt_token_count")))
    o = td.get(u, "completion_tokens", td.get(u, "output_tokens", td.get(u, "candidates_token_count")))
    return {"input_tokens": i, "output_tokens": o}


def result_of(llm, r):
    text = "".join(b.text for b in r.message.blocks if isinstance(b, TextBlock))
    return {"calls": calls_of(llm, r), "text": text or None, "finish": None, "usage": usage_of(r)}


def indexed(calls):
    """Each streamed response holds the calls so far, whole, and LlamaIndex gives them no index:
    a call is told apart by its id and, among calls listed under one id, by its rank there (a
    call without an id by its position)."""
    seen, out = {}, []
    for i, c in enumerate(calls):
        key = c.get("id")
        if key:
            out.append(dict(c, index=seen.get(key, 0)))
            seen[key] = seen.get(key, 0) + 1
        else:
            out.append(dict(c, index=i))
    return out


def call(trial, messages):
    llm = llm_of(trial)
    kw = options_of(trial)
    mcp = Mcp(trial) if trial.get("mcp") else None
    tools = tools_of(trial) if mcp is None else mcp.tools
    history = Conversation.for_round(trial, messages, mcp)
    if not trial["stream"]:
        r = llm.chat_with_tools(tools, chat_history=history, **kw)
        Conversation.answer(llm, r)
        return result_of(llm, r)
    chunks, last = [], None
    for r in llm.stream_chat_with_tools(tools, chat_history=history, **kw):
        last = r
        doc = {}
        if r.delta:
            doc["text"] = r.delta
        calls = calls_of(llm, r)
        if calls:
            doc["calls"] = indexed(calls)
        if doc:
            chunks.append(doc)
    Conversation.answer(llm, last)
    result = result_of(llm, last) if last is not None else {"calls": [], "text": None, "finish": None, "usage": None}
    result["chunks"] = chunks
    return result


# Why each entry this driver answers `unsupported` for is not expressible through LlamaIndex
# (llama-index 0.14.25 with llama-index-llms-openai, -anthropic, -google-genai; their installed
# source), by the FunctionCallingLLM API this driver calls.
UNSUPPORTED = {
    "allowed_callers": (
        "llama-index 0.14.25 names allowed_callers nowhere in llama_index/: its tools (FunctionTool, ToolMetadata: name, "
        "description, fn_schema) have no callers, and its LLM classes send every tool as the model's own (class 30)"
    ),
    "thinking": (
        "llama-index-llms-openai llama_index/llms/openai/utils.py O1_MODELS: OpenAI's reasoning_effort and OpenAIResponses' "
        "reasoning_options are sent only for the models in that table (this route's model is not one; the setting would be left out "
        "silently)"
    ),
    "hosted": (
        "DRIVER GAP, not verified either way: llama-index-llms-openai's OpenAIResponses takes built-in tools "
        "(llama_index/llms/openai/responses.py built_in_tools) and the other classes their providers' own; "
        "FunctionCallingLLM.chat_with_tools has no portable hosted tool, and this driver passes none"
    ),
    "continue_with": (
        "DRIVER GAP, not verified either way: llama-index-llms-openai llama_index/llms/openai/responses.py OpenAIResponses keeps "
        "`previous_response_id` (track_previous_responses); this driver does not use it"
    ),
    "caller_tools": (
        "llama-index-core llama_index/core/tools FunctionTool/BaseTool: tools are functions with a JSON Schema (fn_schema) turned into "
        "function tools by each class (to_openai_tool); no OpenAI custom (freeform/grammar) tool"
    ),
    "round_routes": (
        "DRIVER GAP, not a library limit: LlamaIndex's ChatMessage history is one shape for every LLM class, so a conversation may go on "
        "through another class; this driver does not switch classes mid-trial yet"
    ),
    "compaction": (
        "llama-index 0.14.25: no context-management or compaction parameter in llama-index-llms-openai (OpenAI, OpenAIResponses), "
        "-anthropic or -google-genai (no 'compaction' or 'context_management' in their source)"
    ),
    "eager_input_streaming": (
        "llama-index-llms-anthropic llama_index/llms/anthropic/base.py Anthropic._prepare_chat_with_tools builds each tool from the "
        "FunctionTool's metadata (name, description, input_schema); no eager_input_streaming"
    ),
    "defer_loading": (
        "llama-index 0.14.25: no defer_loading and no tool search in llama-index-llms-openai, -anthropic or -google-genai (no "
        "'defer_loading' or 'tool_search' in their source)"
    ),
    "namespace": "llama-index-llms-openai llama_index/llms/openai/responses.py: function tools only (to_openai_tool), no namespace tool",
    "tool_choice allowed": (
        "llama-index-llms-openai llama_index/llms/openai/utils.py resolve_tool_choice: 'none', 'auto', 'required', a function's name, or a "
        "provider's own dict passed as is; no portable allowed-tools subset"
    ),
    "tool_choice": (
        "llama-index-llms-anthropic llama_index/llms/anthropic/base.py Anthropic._prepare_chat_with_tools(tools, ..., tool_required, "
        "**kwargs): no tool_choice (only tool_required: a call or not), so neither none nor a forced tool has a knob (its kwargs go to "
        "messages.create as given, in Anthropic's own spelling)"
    ),
    "strict": (
        "DRIVER GAP on the OpenAI classes: llama-index-llms-openai llama_index/llms/openai/base.py OpenAI.strict ('Whether to use strict "
        "mode for invoking tools') and _prepare_chat_with_tools(strict=); llama-index-llms-anthropic and -google-genai have no strict for "
        "tools"
    ),
    "api": (
        "this driver's routes are OpenAI Chat and Responses, Anthropic and Gemini (clients/llama-index.toml), each through its "
        "llama-index-llms class"
    ),
}


if __name__ == "__main__":
    td.serve(call, supports=["thinking", "result_parts", "mcp"], unsupported=UNSUPPORTED)
