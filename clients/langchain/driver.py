"""tooltape driver for LangChain chat models: `langchain-openai` (ChatOpenAI, Chat Completions
and Responses), `langchain-anthropic` (ChatAnthropic) and `langchain-google-genai`
(ChatGoogleGenerativeAI), tools bound with `bind_tools` in each form its documentation lists (an
OpenAI function dict, an OpenAI tool dict, a JSON Schema dict, a StructuredTool: the route's
`options.tools`; a pydantic class or a Python function cannot be built from an arbitrary JSON
Schema), `tool_choice` in LangChain's one spelling for every provider, called with `invoke` or
`stream`; streamed chunks are summed (`chunk + chunk`,
LangChain's documented accumulation) into the result. On every route the AIMessage itself (where
each integration keeps its provider's state: thinking blocks with their signatures, Responses
reasoning items, Gemini's thought signatures in `additional_kwargs`, the call ids) is handed over
as the result's `reasoning` (`message_to_dict`) and goes back as is in the next round's messages,
as LangChain's tool-calling docs append the returned message; the results are `ToolMessage`s.

Tool results given as parts (`result_parts`) are a `ToolMessage` whose content is LangChain's
standard content blocks (`{"type": "text"}`, `{"type": "image", "base64", "mime_type"}` or
`{"type": "image", "url"}`), the same for every provider. A trial continued by
`previous_response_id` (`continue_with`, the Responses route) runs
`ChatOpenAI(use_previous_response_id=True)`: the caller passes the whole conversation, its
`AIMessage`s carrying `response_metadata["id"]` as LangChain handed them over, and LangChain sends
only what follows the last answer. Hosted web search has no portable spelling in LangChain (each
integration documents its own server-tool dict for `bind_tools`): not wired.

Thinking (`thinking`) is `reasoning_effort`, the field ChatOpenAI, ChatAnthropic and
ChatGoogleGenerativeAI each take under that name (langchain-core's model profiles list each
model's `reasoning_effort_levels`); it takes a level, not a token budget, so the driver asks `"low"`
and the trial's budget is not carried.

Tools through MCP (`mcp`, the `mcp-API` routes): `langchain-mcp-adapters` (0.3.2, with `mcp` 1.30.0),
as its README (https://pypi.org/project/langchain-mcp-adapters/) and the package reference
(https://reference.langchain.com/python/langchain_mcp_adapters) show its users:
`MultiServerMCPClient({"tooltape": {"url": URL, "transport": "streamable_http"}})` and `await
client.get_tools()` (langchain_mcp_adapters/client.py), the library's own
`StructuredTool`s (langchain_mcp_adapters/tools.py `convert_mcp_tool_to_langchain_tool`: the MCP
tool's `inputSchema` as the tool's `args_schema` dict, its description or ""), bound with
`bind_tools` as on every route (the trial's `tools` only list what the server serves). Each call
is run as LangChain's tool-calling docs run one, `await tool.ainvoke(tool_call)` with the
`ToolCall` of the AIMessage the library answered, which makes the `ToolMessage` (a new MCP session
per call, `get_tools`' documented default); that message goes back in place of tooltape's result,
each call once in a trial (kept by call id for the later rounds). What the ToolMessage carries is
the adapter's (tools.py `_convert_call_tool_result`): the result's content blocks as LangChain
content blocks (text, image as base64 with its MIME type, resource links and embedded resources;
audio raises NotImplementedError), `structuredContent` only as the message's `artifact` (not sent
to the model), and `isError` as a `ToolMessage` with `status="error"` and the error's blocks
(`handle_tool_errors=True`, MultiServerMCPClient's default). The model is called as on the other
routes (`invoke` / `stream`); the MCP side runs on one event loop kept for the driver process.
LangChain's docs now also describe `langchain.mcp.MCPAdapter` (`langchain[mcp]>=1.4.0`, beta, on
FastMCP; https://docs.langchain.com/oss/python/migrate/langchain-mcp-adapters) as the successor of
MultiServerMCPClient: not run here (the profile pins no `langchain` package)."""

import inspect
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages import message_to_dict, messages_from_dict


def model_of(trial):
    api, key, base = trial["api"], trial["api_key"], trial["base_url"]
    effort = {} if trial.get("thinking") is None else {"reasoning_effort": "low"}
    if api in ("openai-chat", "openai-responses"):
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            model=trial["model"],
            base_url=base + "/v1",
            api_key=key,
            max_retries=0,
            use_responses_api=api == "openai-responses",
            use_previous_response_id=trial.get("continue_with") == "previous_response_id",
            max_tokens=trial.get("max_tokens"),
            stream_usage=True,
            **effort,
        )
    if api == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(
            model=trial["model"],
            base_url=base,
            api_key=key,
            max_retries=0,
            max_tokens=trial.get("max_tokens") or 1024,
            **effort,
        )
    if api == "gemini":
        from langchain_google_genai import ChatGoogleGenerativeAI

        kw = {}
        if trial.get("max_tokens") is not None:
            kw["max_output_tokens"] = trial["max_tokens"]
        return ChatGoogleGenerativeAI(model=trial["model"], google_api_key=key, base_url=base, max_retries=0, **kw, **effort)
    raise td.Unsupported(["api " + api])


def tool_content(m):
    """A tool result's content: its parts as standard content blocks when given as parts."""
    if not m.get("parts"):
        return m.get("content") or ""
    return td.convert_parts(
        m["parts"],
        text=lambda t: {"type": "text", "text": t},
        image=lambda mime, data: {"type": "image", "base64": data, "mime_type": mime},
        image_url=lambda url: {"type": "image", "url": url},
    )


class Mcp:
    """One trial's MCP side: the tools the library made of the server's list (`td.mcp_tools`), and
    the ToolMessage each call made (`td.mcp_answers`: each call runs once in a trial)."""

    def __init__(self, trial):
        def make(url):
            from langchain_mcp_adapters.client import MultiServerMCPClient

            client = MultiServerMCPClient({"tooltape": {"url": url, "transport": "streamable_http"}})
            return td.run_async(client.get_tools())
        self.tools = td.mcp_tools(trial, make)
        self.results = td.mcp_answers(trial)

    def result(self, m, calls):
        """The ToolMessage of running the call `m` answers (among `calls`, the ToolCalls of the
        last AIMessage) through its MCP tool, as a LangChain user runs it."""
        cid = m.get("call_id")
        if cid not in self.results:
            call = calls.get(cid)
            if call is None:
                raise RuntimeError(f"tooltape's result answers call {cid!r}, which is not among the calls LangChain handed over last")
            tool = next((t for t in self.tools if t.name == call["name"]), None)
            if tool is None:
                raise RuntimeError(f"the model called {call['name']!r}, which is none of the MCP tools get_tools() made")
            self.results[cid] = td.run_async(tool.ainvoke(call))
        return self.results[cid]


def messages_of(messages, mcp=None):
    out, calls = [], {}
    for m in messages:
        role, content = m["role"], m.get("content") or ""
        if role == "system":
            out.append(SystemMessage(content))
        elif role == "assistant" and (m.get("reasoning") or [{}])[0].get("langchain"):
            # The library's own message, as the caller's message list keeps it.
            out += messages_from_dict([m["reasoning"][0]["langchain"]])
            calls = {c["id"]: c for c in out[-1].tool_calls}
        elif role == "assistant":
            tool_calls = [
                {"name": c.get("name"), "args": td.arguments_object(c.get("arguments")), "id": c.get("id"), "type": "tool_call"}
                for c in m.get("tool_calls") or []
            ]
            # The answer's id as LangChain handed it over (`response_metadata["id"]`).
            meta = {"id": m["response_id"]} if m.get("response_id") else {}
            out.append(AIMessage(content=content, tool_calls=tool_calls, response_metadata=meta))
            calls = {c["id"]: c for c in out[-1].tool_calls}
        elif role == "tool" and mcp is not None:
            # The library's own result of running the call through MCP, not tooltape's copy.
            out.append(mcp.result(m, calls))
        elif role == "tool":
            status = "error" if m.get("is_error") else "success"
            out.append(ToolMessage(tool_content(m), tool_call_id=m.get("call_id"), name=m.get("name"), status=status))
        else:
            out.append(HumanMessage(content))
    return out


def tool_of(t, form):
    """One trial tool in a form LangChain's `bind_tools` documents (`convert_to_openai_tool`)."""
    desc = t.get("description")
    if form == "tool_dict":
        f = {"name": t["name"], "parameters": t["parameters"]}
        if desc is not None:
            f["description"] = desc
        return {"type": "function", "function": f}
    if form == "json_schema":
        # A JSON Schema dict: the tool's name is its `title`, its description the schema's.
        schema = dict(t["parameters"])
        schema["title"] = t["name"]
        if desc is not None:
            schema["description"] = desc
        return schema
    if form == "structured_tool":
        from langchain_core.tools import StructuredTool

        if desc is None:
            # A StructuredTool always has a description (from_function refuses none).
            raise td.Unsupported(["tool without description (StructuredTool)"])

        def run(**kwargs):
            raise RuntimeError("the caller runs the tools")

        return StructuredTool.from_function(run, name=t["name"], description=desc, args_schema=t["parameters"])
    # function_dict: an OpenAI function dict (name, description, parameters).
    f = {"name": t["name"], "parameters": t["parameters"]}
    if desc is not None:
        f["description"] = desc
    return f


def bound(model, trial):
    """`bind_tools` as a user of LangChain's portable API calls it: the same values for every
    provider (`tool_choice` "auto", "none", "required" or a tool's name), tools in the route's
    form (`options.tools`: function_dict, tool_dict, json_schema, structured_tool), or the tools
    langchain-mcp-adapters made of the MCP server's list (`mcp`)."""
    if not trial["tools"] and not trial.get("mcp"):
        return model
    params = inspect.signature(model.bind_tools).parameters
    kw = {}
    choice = trial.get("tool_choice")
    if isinstance(choice, dict) and "allowed" in choice:
        raise td.Unsupported(["tool_choice allowed"])
    if isinstance(choice, dict):
        kw["tool_choice"] = choice["name"]
    elif choice is not None:
        kw["tool_choice"] = choice
    if trial.get("parallel_tool_calls") is not None:
        if "parallel_tool_calls" not in params:
            raise td.Unsupported(["parallel_tool_calls"])
        kw["parallel_tool_calls"] = trial["parallel_tool_calls"]
    if trial.get("strict"):
        if "strict" not in params:
            raise td.Unsupported(["strict"])
        kw["strict"] = True
    if trial.get("mcp"):
        tools = Mcp(trial).tools
    else:
        form = (trial.get("options") or {}).get("tools", "function_dict")
        tools = [tool_of(t, form) for t in trial["tools"]]
    return model.bind_tools(tools, **kw) if tools else model


def text_of(content):
    if isinstance(content, str):
        return content or None
    parts = [
        b.get("text", "") if isinstance(b, dict) else str(b) for b in content or [] if not isinstance(b, dict) or b.get("type") == "text"
    ]
    return "".join(parts) or None


def result_of(msg):
    calls = [{"id": c.get("id"), "name": c.get("name"), "arguments": c.get("args")} for c in msg.tool_calls]
    # Calls whose arguments did not parse are kept apart by LangChain: the caller still gets them.
    calls += [{"id": c.get("id"), "name": c.get("name"), "arguments": c.get("args")} for c in getattr(msg, "invalid_tool_calls", [])]
    meta = msg.response_metadata or {}
    finish = meta.get("finish_reason") or meta.get("stop_reason") or meta.get("status")
    usage = None
    if msg.usage_metadata:
        usage = {"input_tokens": msg.usage_metadata.get("input_tokens"), "output_tokens": msg.usage_metadata.get("output_tokens")}
    text = text_of(msg.content) or (msg.additional_kwargs or {}).get("refusal")
    result = {"calls": calls, "text": text, "finish": None if finish is None else str(finish), "usage": usage}
    if str(meta.get("id") or "").startswith("resp_"):
        result["response_id"] = meta["id"]
    return result


def kept(result, msg):
    """The result, with the message itself for the next round (every route alike)."""
    result["reasoning"] = [{"langchain": message_to_dict(msg)}]
    return result


def call(trial, messages):
    runnable = bound(model_of(trial), trial)
    msgs = messages_of(messages, Mcp(trial) if trial.get("mcp") else None)
    if not trial["stream"]:
        msg = runnable.invoke(msgs)
        return kept(result_of(msg), msg)
    full, chunks = None, []
    for chunk in runnable.stream(msgs):
        full = chunk if full is None else full + chunk
        doc = {}
        if text_of(chunk.content):
            doc["text"] = text_of(chunk.content)
        calls = []
        for c in chunk.tool_call_chunks or []:
            d = {k: c.get(k) for k in ("index", "id", "name") if c.get(k) is not None}
            if c.get("args") is not None:
                d["arguments"] = c.get("args")
            calls.append(d)
        if calls:
            doc["calls"] = calls
        if doc:
            chunks.append(doc)
    result = result_of(full) if full is not None else {"calls": [], "text": None}
    result["chunks"] = chunks
    return kept(result, full) if full is not None else result


# Why each entry this driver answers `unsupported` for is not expressible through LangChain
# (langchain-core 1.8.3, langchain-openai 1.7.4, langchain-anthropic 1.7.10, langchain-google-genai
# 4.4.2, their installed source), by bind_tools and the chat models this driver builds.
UNSUPPORTED = {
    "allowed_callers": (
        "langchain-anthropic (langchain 1.7.4's) chat_models.py: a tool dict's allowed_callers passed through to Anthropic; "
        "DRIVER GAP, not a library limit: this driver does not yet pass a tool's callers, the runner or a call's caller and "
        "container back (class 30)"
    ),
    "hosted": (
        "DRIVER GAP, not a library limit: no portable spelling, but each integration documents its server tools as dicts for bind_tools "
        "(langchain_openai/chat_models/base.py WellKnownTools: web_search, tool_search, ...; langchain_anthropic/chat_models.py "
        "_is_builtin_tool: web_search_*, tool_search_*, ...); this driver does not pass them yet"
    ),
    "caller_tools": (
        "DRIVER GAP, not verified either way: langchain-openai 1.7.4 chat_models/base.py handles OpenAI custom tools "
        "(custom_tool_call_output, _make_custom_tool_output_from_message); this driver does not bind one yet"
    ),
    "compaction": (
        "DRIVER GAP, not a library limit: ChatOpenAI.context_management (langchain_openai/chat_models/base.py, OpenAI's compaction guide) "
        "and ChatAnthropic.context_management (langchain_anthropic/chat_models.py) are documented per integration; ChatGoogleGenerativeAI "
        "has none; this driver does not pass them yet"
    ),
    "eager_input_streaming": (
        "DRIVER GAP, not a library limit: langchain-core 1.8.3 tools/base.py BaseTool.extras ('provider-specific extra fields for the "
        "tool') reaches Anthropic for the fields langchain_anthropic/chat_models.py _ANTHROPIC_EXTRA_FIELDS lists (eager_input_streaming "
        "among them); this driver does not pass extras yet"
    ),
    "defer_loading": (
        "DRIVER GAP, not a library limit: langchain-core 1.8.3 tools/base.py BaseTool.extras documents `extras={\"defer_loading\": True}` "
        "(langchain_anthropic _ANTHROPIC_EXTRA_FIELDS; langchain_openai _TOOL_EXTRAS_PASSTHROUGH), and the tool searches are the "
        "integrations' server-tool dicts; this driver does not pass them yet"
    ),
    "namespace": (
        "langchain-openai 1.7.4 chat_models/base.py: a call's namespace is read back from Responses output (chunk.item.namespace), but "
        "bind_tools documents no namespace for a tool (BaseTool.extras passes only defer_loading and async to OpenAI: "
        "_TOOL_EXTRAS_PASSTHROUGH)"
    ),
    "tool without description (StructuredTool)": (
        "langchain-core 1.8.3 tools/structured.py StructuredTool.from_function: a tool without a description (no docstring, no "
        "description=) is refused ('Function must have a docstring if description not provided')"
    ),
    "tool_choice allowed": (
        "langchain-core 1.8.3 language_models/chat_models.py BaseChatModel.bind_tools: tool_choice is 'auto' | 'any'/'required' | 'none' | "
        "a tool's name; no allowed-tools subset"
    ),
    "parallel_tool_calls": (
        "langchain-google-genai 4.4.2 chat_models.py ChatGoogleGenerativeAI.bind_tools(tools, tool_config, *, tool_choice, **kwargs): no "
        "parallel_tool_calls (ChatOpenAI's and ChatAnthropic's bind_tools have it)"
    ),
    "strict": (
        "langchain-google-genai 4.4.2 chat_models.py ChatGoogleGenerativeAI.bind_tools(tools, tool_config, *, tool_choice, **kwargs): no "
        "strict (ChatOpenAI's and ChatAnthropic's bind_tools have it)"
    ),
    "api": (
        "this driver's routes are OpenAI Chat and Responses, Anthropic and Gemini (clients/langchain.toml), each through its LangChain "
        "integration"
    ),
}


if __name__ == "__main__":
    td.serve(call, supports=["thinking", "result_parts", "continue_with", "round_routes", "mcp"], unsupported=UNSUPPORTED)
