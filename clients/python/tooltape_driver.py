"""The driver protocol's loop for Python drivers (docs/clients/README.md), and readers of the
OpenAI Chat shapes several libraries share. Standard library only.

A driver calls `serve(call)`. `call(trial, messages)` makes one call through the library, the way
its documentation tells users to, and returns the result document: `calls`, `text`, `finish`,
`usage`, `chunks` (streamed), `reasoning` (the reasoning state to send back, in the API's own
form), or raises `Unsupported([...])` for trial fields the library has no knob for. Any other
exception becomes the result's `error`. `messages` is the conversation so far: the trial's, then
for each follow-up round the assistant turn as the library handed it over and the tool results
tooltape sent. The Node.js twin of this loop is
clients/node/tooltape_driver.mjs; tests/it/driver_loops.rs holds both and `tooltape client
drive` to the same behaviour.
"""

import json
import os
import sys


class Unsupported(Exception):
    """The library cannot express these trial fields (not a failure: "not expressible").

    "Not expressible" is a claim about the library, so each entry carries its citation: the
    library's documentation or source at the pinned version (a URL, or a file and symbol) and a
    line of what it says, given here (`cite`, one for every entry) or, for the entry or the words
    it starts with, in the driver's `serve(call, unsupported={...})`. An entry cited nowhere is the
    driver's error, not an answer (`UncitedUnsupported`)."""

    def __init__(self, fields, cite=None):
        super().__init__(", ".join(fields))
        self.fields = list(fields)
        self.cite = cite


class UncitedUnsupported(Exception):
    """The driver answers `unsupported` for an entry it cites no documentation for."""


def citation(entry, cited):
    """The citation `cited` (the driver's `serve(..., unsupported=...)`) gives `entry`: its own,
    else that of the longest key the entry starts with, word for word (`api` for `api gemini`)."""
    if entry in cited:
        return cited[entry]
    keys = [k for k in cited if entry.startswith(k + " ")]
    return cited[max(keys, key=len)] if keys else None


def unsupported_answer(u, cited):
    """The result for `Unsupported` `u`: `{"unsupported": [...], "unsupported_why": {entry:
    citation}}` (tooltape reads `unsupported`; `unsupported_why` is for the driver log and readers
    of the line). An entry without a citation raises `UncitedUnsupported`."""
    why = {f: u.cite or citation(f, cited) for f in u.fields}
    uncited = [f for f, c in why.items() if not c]
    if uncited:
        raise UncitedUnsupported(
            "the driver answers unsupported for "
            + ", ".join(uncited)
            + " without citing the library's documentation that says so (serve(call, unsupported={...}))"
        )
    for f, c in why.items():
        sys.stderr.write(f"unsupported {f}: {c}\n")
    return {"unsupported": u.fields, "unsupported_why": why}


def error_of(e):
    status = None
    for attr in ("status_code", "status", "code"):
        v = getattr(e, attr, None)
        if isinstance(v, int) and 100 <= v < 600:
            status = v
            break
    doc = {"type": type(e).__name__, "message": str(e)[:2000]}
    if status is not None:
        doc["status"] = status
    return doc


# Every trial has these; the others (`options`, `tool_choice`, ...) may be absent.
REQUIRED = ("name", "api", "base_url", "api_key", "model", "stream", "messages", "tools", "strict")


class ProtocolError(Exception):
    """A line the protocol does not allow where it came: the driver stops with status 2."""


def _object(line, what):
    try:
        doc = json.loads(line)
    except ValueError as e:
        raise ProtocolError(f"{what} is not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ProtocolError(f"{what} is not a JSON object")
    return doc


def _next_line():
    """The next line that is not blank, or None at end of input."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        if line.strip():
            return line


# Trial fields a driver must say it handles (`serve(call, supports=[...])`): a trial that sets one
# the driver does not handle is answered `unsupported` without calling the library, with the
# citation the driver gives for it (`serve(call, unsupported={field: citation})`); a driver that
# neither handles a field the trial sets nor cites why its library cannot answers an error.
OPTIONAL_FEATURES = ("thinking", "hosted", "result_parts", "continue_with", "caller_tools", "round_routes", "compaction", "mcp")


# A tool field a driver must say it handles the same way: a trial with a tool that sets it (true)
# is answered `unsupported`. `eager_input_streaming` (Anthropic's fine-grained tool streaming,
# class 25) is set on the `anthropic` api only; `defer_loading` (a tool declared deferred beside a
# tool search, class 28), `namespace` (a Responses namespace, class 29) and `allowed_callers` (who
# may call it: the model, or code the model wrote, class 30) on the APIs that have them.
OPTIONAL_TOOL_FEATURES = ("eager_input_streaming", "defer_loading", "namespace", "allowed_callers")


def _unhandled(trial, supports):
    fields = [k for k in OPTIONAL_FEATURES if trial.get(k) is not None and k not in supports]
    tools = trial.get("tools") or []
    fields += [k for k in OPTIONAL_TOOL_FEATURES if k not in supports and any(t.get(k) for t in tools)]
    return fields


def _serve(call, out, supports=(), cited=None):
    cited = cited or {}
    while (line := _next_line()) is not None:
        trial = _object(line, "a trial line")
        missing = [k for k in REQUIRED if k not in trial]
        if missing:
            raise ProtocolError("a trial line lacks " + ", ".join(missing))
        messages = list(trial["messages"])
        rounds = 0
        while True:
            try:
                unhandled = _unhandled(trial, supports)
                if unhandled:
                    raise Unsupported(unhandled)
                result = call(trial, messages)
            except Unsupported as u:
                try:
                    result = unsupported_answer(u, cited)
                except UncitedUnsupported as e:
                    result = {"error": error_of(e)}
            except Exception as e:  # the library raised: the caller sees an error
                result = {"error": error_of(e)}
            out.write(json.dumps({"result": result}) + "\n")
            out.flush()
            after = _next_line()
            if after is None:
                return
            nxt = _object(after, "the line after a result")
            if isinstance(nxt.get("results"), list):
                # The follow-up's tool_choice (absent: leave it out).
                trial = dict(trial, tool_choice=nxt.get("tool_choice"))
                if isinstance(nxt.get("tools"), list):
                    # The round changes the tools in force (class 26).
                    trial["tools"] = nxt["tools"]
                route = (trial.get("round_routes") or [])[rounds:rounds + 1]
                rounds += 1
                if route and isinstance(route[0], dict):
                    # The round goes on another provider (class 20): its route's api, model, options.
                    trial.update(api=route[0]["api"], model=route[0]["model"], options=route[0].get("options") or {})
                turn = {"role": "assistant", "content": result.get("text"), "tool_calls": result.get("calls") or []}
                if result.get("reasoning"):
                    # The reasoning state the library handed over, for the next round.
                    turn["reasoning"] = result["reasoning"]
                if result.get("response_id"):
                    # The answer's id, for a round continued by previous_response_id.
                    turn["response_id"] = result["response_id"]
                messages.append(turn)
                messages.extend(nxt["results"])
            elif "done" in nxt:
                break
            else:
                raise ProtocolError("the line after a result is neither results nor done: " + after.strip()[:200])


def serve(call, supports=(), unsupported=None):
    """Serves trials from stdin until end of input; a protocol error ends the process (status 2).
    `supports`: the optional trial and tool fields (OPTIONAL_FEATURES, OPTIONAL_TOOL_FEATURES) the
    driver handles. `unsupported`: `{entry: citation}` for every other such field and every entry
    the driver's own `Unsupported` raises without a `cite` (a key also covers entries starting with
    it and a space): where the library's documentation or source, at the pinned version, says it
    has no knob for it, and a line of what it says."""
    # The protocol owns stdout: anything the library prints goes to stderr (the driver log).
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        _serve(call, out, supports, unsupported)
    except ProtocolError as e:
        sys.stderr.write(f"protocol error: {e}\n")
        sys.stderr.flush()
        sys.exit(2)


def arguments_text(a):
    """A call's arguments as a JSON string (libraries take either)."""
    if a is None:
        return "{}"
    return a if isinstance(a, str) else json.dumps(a)


def arguments_object(a):
    if a is None or a == "":
        return {}
    return json.loads(a) if isinstance(a, str) else a


# ---- OpenAI Chat Completions shapes (the official SDK, LiteLLM and any-llm take them) ----


def convert_parts(parts, text, image=None, image_url=None):
    """A tool result's parts (`result_parts`) in a library's own form, each through its kind's
    converter: `text(str)`, `image(media_type, base64_data)`, `image_url(url)`. A kind the library
    has no converter for (None) is `unsupported`."""
    out = []
    for p in parts:
        kind = p.get("type")
        if kind == "text" and text:
            out.append(text(p.get("text") or ""))
        elif kind == "image" and image:
            out.append(image(p.get("media_type"), p.get("data")))
        elif kind == "image_url" and image_url:
            out.append(image_url(p.get("url")))
        else:
            raise Unsupported(["result_parts " + str(kind)])
    return out


def chat_content_parts(parts):
    """A tool result's parts (`result_parts`) as OpenAI Chat content parts: `text`, an image as
    `image_url` (a data URL, or the image's URL), the shape libraries that take OpenAI's messages
    translate for every provider."""
    return convert_parts(
        parts,
        text=lambda t: {"type": "text", "text": t},
        image=lambda mime, data: {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}},
        image_url=lambda url: {"type": "image_url", "image_url": {"url": url}},
    )


def chat_messages(messages, parts=False):
    """The protocol's messages as OpenAI Chat messages; with `parts`, a tool result given as parts
    goes as content parts (`chat_content_parts`), else as its text."""
    out = []
    for m in messages:
        role = m["role"]
        if role == "assistant":
            msg = {"role": "assistant", "content": m.get("content")}
            if m.get("tool_calls"):
                msg["tool_calls"] = [
                    {
                        "id": c.get("id"),
                        "type": "function",
                        "function": {"name": c.get("name"), "arguments": arguments_text(c.get("arguments"))},
                    }
                    for c in m["tool_calls"]
                ]
            out.append(msg)
        elif role == "tool":
            content = chat_content_parts(m["parts"]) if parts and m.get("parts") else m.get("content") or ""
            out.append({"role": "tool", "tool_call_id": m.get("call_id"), "content": content})
        else:
            out.append({"role": role, "content": m.get("content") or ""})
    return out


def parameters(trial, tool):
    """The schema a caller of a pass-through library writes: strict's dialect when strict."""
    if trial.get("strict") and tool.get("strict_parameters") is not None:
        return tool["strict_parameters"]
    return tool["parameters"]


def chat_tools(trial):
    tools = []
    for t in trial["tools"]:
        f = {"name": t["name"], "parameters": parameters(trial, t)}
        if t.get("description") is not None:
            f["description"] = t["description"]
        if trial.get("strict"):
            f["strict"] = True
        tools.append({"type": "function", "function": f})
    return tools


def chat_choice(choice):
    if choice is None or isinstance(choice, str):
        return choice
    if "name" in choice:
        return {"type": "function", "function": {"name": choice["name"]}}
    return {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": choice.get("mode", "auto"),
            "tools": [{"type": "function", "function": {"name": n}} for n in choice["allowed"]],
        },
    }


def chat_kwargs(trial):
    """The Chat request's tool fields, each only when the trial sets it."""
    kw = {}
    if trial["tools"]:
        kw["tools"] = chat_tools(trial)
    if trial.get("tool_choice") is not None:
        kw["tool_choice"] = chat_choice(trial["tool_choice"])
    if trial.get("parallel_tool_calls") is not None:
        kw["parallel_tool_calls"] = trial["parallel_tool_calls"]
    if trial.get("max_tokens") is not None:
        kw["max_tokens"] = trial["max_tokens"]
    return kw


def get(o, key, default=None):
    """Attribute or key: libraries hand over objects or dicts."""
    if o is None:
        return default
    if isinstance(o, dict):
        return o.get(key, default)
    return getattr(o, key, default)


def chat_chunk(chunk):
    """One OpenAI-shaped stream chunk as a protocol chunk (None when it carries nothing)."""
    doc = {}
    choices = get(chunk, "choices") or []
    if choices:
        c = choices[0]
        delta = get(c, "delta")
        text = get(delta, "content")
        if text:
            doc["text"] = text
        calls = []
        for d in get(delta, "tool_calls") or []:
            f = get(d, "function")
            call = {}
            if get(d, "index") is not None:
                call["index"] = get(d, "index")
            if get(d, "id"):
                call["id"] = get(d, "id")
            if get(f, "name"):
                call["name"] = get(f, "name")
            if get(f, "arguments") is not None:
                call["arguments"] = get(f, "arguments")
            calls.append(call)
        if calls:
            doc["calls"] = calls
        if get(c, "finish_reason"):
            doc["finish"] = str(get(c, "finish_reason"))
    return doc or None


def chat_gathered(chunks):
    """The calls of streamed Chat protocol chunks as a caller gathers them where the library has
    no accumulator: by index, a new id at an index starting a new call."""
    calls = []
    for ch in chunks:
        for d in ch.get("calls", []):
            i = d.get("index")
            c = next((c for c in reversed(calls) if i is not None and c.get("index") == i), None)
            if c is not None and d.get("id") and c.get("id") and d["id"] != c["id"]:
                c = None
            if c is None:
                c = {"index": i, "arguments": ""}
                calls.append(c)
            for k in ("id", "name"):
                if d.get(k):
                    c[k] = d[k]
            a = d.get("arguments")
            if a is not None:
                c["arguments"] += a if isinstance(a, str) else arguments_text(a)
    return [{"id": c.get("id"), "name": c.get("name"), "arguments": c["arguments"]} for c in calls]


def chat_usage(usage):
    if usage is None:
        return None
    return {"input_tokens": get(usage, "prompt_tokens"), "output_tokens": get(usage, "completion_tokens")}


def chat_message_result(message, finish, usage):
    """A Chat completion's message (object or dict) as the result document."""
    calls = [
        {"id": get(c, "id"), "name": get(get(c, "function"), "name"), "arguments": get(get(c, "function"), "arguments")}
        for c in (get(message, "tool_calls") or [])
    ]
    return {
        "calls": calls,
        # A refusal is the model's text, in a field of its own.
        "text": get(message, "content") or get(message, "refusal"),
        "finish": None if finish is None else str(finish),
        "usage": chat_usage(usage),
    }


# ---- OpenAI Responses shapes (the official SDK and any-llm's responses()) ----


def responses_function_tools(trial, tools, keys=("defer_loading",)):
    """The Responses function tools `tools` (one per trial tool, in order) with each trial tool's
    `keys` copied where set (FunctionToolParam's `defer_loading`, `allowed_callers`), a tool in a
    namespace inside that namespace's `{"type": "namespace", "name", "tools"}` entry
    (NamespaceToolParam) where its first member stands."""
    out, spaces = [], {}
    for t, f in zip(trial["tools"], tools):
        for k in keys:
            if t.get(k):
                f[k] = t[k]
        space = t.get("namespace")
        if not space:
            out.append(f)
        elif space in spaces:
            spaces[space]["tools"].append(f)
        else:
            spaces[space] = {"type": "namespace", "name": space, "tools": [f]}
            out.append(spaces[space])
    return out


def kept_turn(m, key):
    """What the library returned for this assistant turn, kept by the driver under `key` in the
    result's `reasoning` (its own objects, the next round's history), or None."""
    if m["role"] != "assistant":
        return None
    return (m.get("reasoning") or [{}])[0].get(key)


def responses_input(messages, parts=False, kept=None):
    """The protocol's messages as Responses input items and instructions; with `parts`, a tool
    result given as parts goes as `function_call_output` items (`responses_output`); with `kept`,
    an assistant turn whose `reasoning` holds the library's output items under that key
    (`kept_turn`) is those items, as they came."""
    items, instructions = [], []
    for m in messages:
        role = m["role"]
        if role == "system":
            instructions.append(m.get("content") or "")
        elif kept and (turn := kept_turn(m, kept)):
            items.extend(turn)
        elif role == "assistant":
            if m.get("content"):
                items.append({"role": "assistant", "content": m["content"]})
            for c in m.get("tool_calls") or []:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": c.get("id"),
                        "name": c.get("name"),
                        "arguments": arguments_text(c.get("arguments")),
                    }
                )
        elif role == "tool":
            output = responses_output(m["parts"]) if parts and m.get("parts") else m.get("content") or ""
            items.append({"type": "function_call_output", "call_id": m.get("call_id"), "output": output})
        else:
            items.append({"role": "user", "content": m.get("content") or ""})
    return items, ("\n\n".join(instructions) or None)


def responses_kwargs(trial, messages, parts=False, kept=None):
    items, instructions = responses_input(messages, parts, kept)
    kw = {"model": trial["model"], "input": items}
    if instructions:
        kw["instructions"] = instructions
    if trial["tools"]:
        kw["tools"] = [
            {
                "type": "function",
                "name": t["name"],
                "description": t.get("description"),
                "parameters": parameters(trial, t),
                "strict": bool(trial.get("strict")),
            }
            for t in trial["tools"]
        ]
    choice = trial.get("tool_choice")
    if isinstance(choice, str):
        kw["tool_choice"] = choice
    elif choice is not None and "name" in choice:
        kw["tool_choice"] = {"type": "function", "name": choice["name"]}
    elif choice is not None:
        kw["tool_choice"] = {
            "type": "allowed_tools",
            "mode": choice.get("mode", "auto"),
            "tools": [{"type": "function", "name": n} for n in choice["allowed"]],
        }
    if trial.get("parallel_tool_calls") is not None:
        kw["parallel_tool_calls"] = trial["parallel_tool_calls"]
    if trial.get("max_tokens") is not None:
        kw["max_output_tokens"] = trial["max_tokens"]
    return kw


def responses_result(r):
    output = get(r, "output") or []
    calls = [
        {"id": get(item, "call_id"), "name": get(item, "name"), "arguments": get(item, "arguments")}
        for item in output
        if get(item, "type") == "function_call"
    ]
    parts = [p for item in output if get(item, "type") == "message" for p in get(item, "content") or []]
    text = "".join(get(p, "text") or "" for p in parts if get(p, "type") == "output_text")
    refusal = "".join(get(p, "refusal") or "" for p in parts if get(p, "type") == "refusal")
    finish = get(r, "status")
    if finish == "incomplete" and get(r, "incomplete_details") is not None:
        finish = get(get(r, "incomplete_details"), "reason")
    usage = get(r, "usage")
    if usage is not None:
        usage = {"input_tokens": get(usage, "input_tokens"), "output_tokens": get(usage, "output_tokens")}
    return {"calls": calls, "text": text or refusal or None, "finish": finish, "usage": usage}


def responses_event(ev):
    """One Responses stream event as a protocol chunk (None when it carries no call or text)."""
    kind = get(ev, "type")
    item = get(ev, "item")
    if kind == "response.output_item.added" and get(item, "type") == "function_call":
        return {"calls": [{"index": get(ev, "output_index"), "id": get(item, "call_id"), "name": get(item, "name")}]}
    if kind == "response.function_call_arguments.delta":
        return {"calls": [{"index": get(ev, "output_index"), "arguments": get(ev, "delta")}]}
    if kind == "response.function_call_arguments.done":
        # The whole arguments again: a caller reading this event has them at once.
        return {"calls": [{"index": get(ev, "output_index"), "arguments": arguments_object(get(ev, "arguments"))}]}
    if kind == "response.output_text.delta":
        return {"text": get(ev, "delta")}
    return None


def responses_output(parts):
    """A tool result's parts (`result_parts`) as a Responses `function_call_output.output` list:
    `input_text` and `input_image` (a data URL, or the image's URL) items."""
    return convert_parts(
        parts,
        text=lambda t: {"type": "input_text", "text": t},
        image=lambda mime, data: {"type": "input_image", "image_url": f"data:{mime};base64,{data}"},
        image_url=lambda url: {"type": "input_image", "image_url": url},
    )


def continued(trial, messages):
    """For a trial continued by `previous_response_id` (`continue_with`): the last answer's id (the
    assistant turn's `response_id`) and the messages after that answer (the round's results), the
    earlier context being the server's; otherwise `(None, messages)`."""
    if trial.get("continue_with") != "previous_response_id":
        return None, messages
    for i in range(len(messages) - 1, -1, -1):
        if messages[i]["role"] == "assistant":
            if messages[i].get("response_id"):
                return messages[i]["response_id"], messages[i + 1 :]
            break
    return None, messages


# ---- The protocol's `mcp` (docs/clients/README.md, "MCP routes") ----

_LOOP = None


def run_async(coro):
    """Runs `coro` on the driver's one event loop (a library's MCP client is async, and its
    sessions and HTTP clients expect one loop for the process)."""
    global _LOOP
    if _LOOP is None:
        import asyncio

        _LOOP = asyncio.new_event_loop()
    return _LOOP.run_until_complete(coro)


_MCP = {"key": None, "answers": {}, "tools": None}


def mcp_answers(trial):
    """The trial's MCP answers by call id (each call runs once in a trial), kept across its rounds;
    a new trial, or the same one sent again (a new server endpoint), starts afresh."""
    key = (trial["name"], trial["mcp"]["url"])
    if _MCP["key"] != key:
        _MCP.update(key=key, answers={}, tools=None)
    return _MCP["answers"]


def mcp_tools(trial, make):
    """The tools the library made of the trial's server, `make(url)` once a trial."""
    mcp_answers(trial)
    if _MCP["tools"] is None:
        _MCP["tools"] = make(trial["mcp"]["url"])
    return _MCP["tools"]
