"""tooltape driver for the official `google-genai` Python SDK: generate_content, buffered and
streamed (generate_content_stream; the SDK hands over whole parts per chunk, so the result is the
chunks' calls gathered as a caller would). Automatic function calling is off: the caller runs
the tools.

Across rounds the driver keeps the `contents` list a caller keeps: the trial's conversation as the
caller wrote it, then the model's turn as the SDK handed it over (`response.candidates[0].content`,
its parts with their `thought_signature`s, appended as is, as the SDK's docs on function calling
and thought signatures tell a caller to), then a user turn of function response parts. Streamed,
each chunk's `candidates[0].content` is appended in order, as the SDK's own chat session records a
streamed answer (`Chat.send_message_stream`). Thinking is `thinking_config.thinking_budget`.

Tool results given as parts (`result_parts`): the text in `response`, each image a
`FunctionResponsePart` (`inline_data` bytes, a URL as `file_data`), as the SDK's docs on
multimodal function responses show. Hosted web search (`hosted`) is a `Tool(google_search=…)`
beside the function declarations; REQUIRED grounding is not expressible (the Gemini API has no
way to force the search)."""

import base64
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tooltape_driver as td
from google import genai
from google.genai import types


def response_object(content, is_error):
    if is_error:
        return {"error": content}
    try:
        v = json.loads(content)
        if isinstance(v, dict):
            return v
    except ValueError:
        pass
    return {"result": content}


def function_response(m):
    """A tool result as a function response part: its text in `response`, its images (given as
    parts) as the response's own parts."""
    media = []
    for p in m.get("parts") or []:
        kind = p.get("type")
        if kind == "image":
            media.append(types.FunctionResponsePart.from_bytes(data=base64.b64decode(p.get("data") or ""), mime_type=p.get("media_type")))
        elif kind == "image_url":
            media.append(types.FunctionResponsePart(file_data=types.FunctionResponseFileData(file_uri=p.get("url"))))
        elif kind != "text":
            raise td.Unsupported(["result_parts " + str(kind)])
    fr = types.FunctionResponse(name=m.get("name"), response=response_object(m.get("content") or "", m.get("is_error")))
    if media:
        fr.parts = media
    return types.Part(function_response=fr)


def contents_of(messages):
    system, out = [], []
    for m in messages:
        role = m["role"]
        if role == "system":
            system.append(m.get("content") or "")
        elif role == "assistant":
            parts = []
            if m.get("content"):
                parts.append(types.Part(text=m["content"]))
            for c in m.get("tool_calls") or []:
                parts.append(
                    types.Part(function_call=types.FunctionCall(name=c.get("name"), args=td.arguments_object(c.get("arguments"))))
                )
            out.append(types.Content(role="model", parts=parts))
        elif role == "tool":
            part = function_response(m)
            if out and out[-1].role == "user" and out[-1].parts and out[-1].parts[0].function_response:
                out[-1].parts.append(part)
            else:
                out.append(types.Content(role="user", parts=[part]))
        else:
            out.append(types.Content(role="user", parts=[types.Part(text=m.get("content") or "")]))
    return ("\n\n".join(system) or None), out


def results_content(messages):
    """The caller's turn after the model's calls: one user turn of function response parts."""
    parts = [function_response(m) for m in messages if m["role"] == "tool"]
    return types.Content(role="user", parts=parts)


class Conversation:
    """The contents a caller keeps for one trial. A round whose `messages` extend the last round's
    (the same trial, its assistant turn and tool results appended) is a follow-up; anything else
    starts a new conversation."""

    name = None
    seen = []
    system = None
    contents = []

    @classmethod
    def for_round(cls, trial, messages):
        n = len(cls.seen)
        if trial["name"] == cls.name and len(messages) > n and messages[:n] == cls.seen:
            # The loop's neutral copy of the model's turn is skipped: the model's own turn is in
            # `contents` already. Then the tool results.
            cls.contents.append(results_content(messages[n:]))
        else:
            cls.name = trial["name"]
            cls.system, cls.contents = contents_of(messages)
        cls.seen = list(messages)
        return cls.system, cls.contents


def config_of(trial, system):
    kw = {"automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True)}
    if system:
        kw["system_instruction"] = system
    if trial["tools"]:
        decls = []
        for t in trial["tools"]:
            d = {"name": t["name"]}
            if t.get("description") is not None:
                d["description"] = t["description"]
            # A tool without parameters sends none (Gemini rejects an empty OBJECT).
            if t["parameters"] and t["parameters"] != {"type": "object", "properties": {}}:
                d["parameters_json_schema"] = t["parameters"]
            decls.append(types.FunctionDeclaration(**d))
        kw["tools"] = [types.Tool(function_declarations=decls)]
    for h in trial.get("hosted") or []:
        if h.get("type") != "web_search" or h.get("grounding") == "required":
            # The Gemini API cannot force the search (no tool_choice names a hosted tool).
            raise td.Unsupported(["hosted " + str(h.get("type")) + " " + str(h.get("grounding"))])
        kw.setdefault("tools", []).append(types.Tool(google_search=types.GoogleSearch()))
    choice = trial.get("tool_choice")
    fc = None
    if choice == "auto":
        fc = types.FunctionCallingConfig(mode="AUTO")
    elif choice == "none":
        fc = types.FunctionCallingConfig(mode="NONE")
    elif choice == "required":
        fc = types.FunctionCallingConfig(mode="ANY")
    elif isinstance(choice, dict) and "name" in choice:
        fc = types.FunctionCallingConfig(mode="ANY", allowed_function_names=[choice["name"]])
    elif isinstance(choice, dict):
        # allowed_function_names only counts with ANY or VALIDATED (the API's documented rule).
        mode = "ANY" if choice.get("mode") == "required" else "VALIDATED"
        fc = types.FunctionCallingConfig(mode=mode, allowed_function_names=list(choice["allowed"]))
    if fc is not None:
        kw["tool_config"] = types.ToolConfig(function_calling_config=fc)
    # The Gemini API has no parallel switch: `parallel_tool_calls` has nothing to become.
    if trial.get("max_tokens") is not None:
        kw["max_output_tokens"] = trial["max_tokens"]
    if trial.get("thinking") is not None:
        kw["thinking_config"] = types.ThinkingConfig(thinking_budget=trial["thinking"])
    return types.GenerateContentConfig(**kw)


def parts_of(response):
    if not response.candidates or not response.candidates[0].content:
        return []
    return response.candidates[0].content.parts or []


def calls_of(parts):
    return [
        {"id": p.function_call.id, "name": p.function_call.name, "arguments": dict(p.function_call.args or {})}
        for p in parts
        if p.function_call is not None
    ]


def text_of(parts):
    return "".join(p.text for p in parts if p.text and not p.thought)


def finish_of(response):
    if not response.candidates or response.candidates[0].finish_reason is None:
        return None
    f = response.candidates[0].finish_reason
    return getattr(f, "value", str(f))


def usage_of(response):
    u = response.usage_metadata
    if u is None:
        return None
    return {"input_tokens": u.prompt_token_count, "output_tokens": u.candidates_token_count}


def call(trial, messages):
    if trial["api"] != "gemini":
        raise td.Unsupported(["api " + trial["api"]])
    system, contents = Conversation.for_round(trial, messages)
    config = config_of(trial, system)
    client = genai.Client(
        api_key=trial["api_key"],
        http_options=types.HttpOptions(base_url=trial["base_url"], api_version="v1beta"),
    )
    if not trial["stream"]:
        r = client.models.generate_content(model=trial["model"], contents=contents, config=config)
        if r.candidates and r.candidates[0].content:
            contents.append(r.candidates[0].content)
        parts = parts_of(r)
        return {"calls": calls_of(parts), "text": text_of(parts) or None, "finish": finish_of(r), "usage": usage_of(r)}
    chunks, calls, text, finish, usage = [], [], "", None, None
    answer = []
    for r in client.models.generate_content_stream(model=trial["model"], contents=contents, config=config):
        if r.candidates and r.candidates[0].content:
            answer.append(r.candidates[0].content)
        parts = parts_of(r)
        doc = {}
        if text_of(parts):
            doc["text"] = text_of(parts)
            text += doc["text"]
        if calls_of(parts):
            doc["calls"] = calls_of(parts)
            calls.extend(doc["calls"])
        if finish_of(r):
            doc["finish"] = finish = finish_of(r)
        if r.usage_metadata is not None:
            usage = usage_of(r)
        chunks.append(doc)
    contents.extend(answer)
    return {"calls": calls, "text": text or None, "finish": finish, "usage": usage, "chunks": chunks}


# Why each entry this driver answers `unsupported` for is not expressible through google-genai
# 3.3.0 (its installed source; the package speaks the Gemini API only, `Client.models`).
UNSUPPORTED = {
    "allowed_callers": (
        "google-genai 3.3.0 types.py FunctionDeclaration: name, description, parameters, behavior; no callers (Gemini has no "
        "programmatic tool calling; class 30)"
    ),
    "continue_with": (
        "google-genai 3.3.0 google/genai/models.py Models.generate_content: a Gemini generateContent call takes the whole `contents`; "
        "previous_response_id is OpenAI Responses' (the package's previous_interaction_id is the separate Interactions API, not this route)"
    ),
    "caller_tools": (
        "google-genai 3.3.0 google/genai/types.py Tool: function_declarations and Google's own tools only; no OpenAI custom "
        "(freeform/grammar) tool"
    ),
    "round_routes": (
        "google-genai 3.3.0 google/genai/client.py Client: one provider's client (the Gemini API / Vertex AI), no other provider to "
        "continue on"
    ),
    "compaction": (
        "google-genai 3.3.0 google/genai/types.py GenerateContentConfig: no context-management or compaction field (no 'compaction' "
        "anywhere in the package)"
    ),
    "eager_input_streaming": (
        "google-genai 3.3.0 google/genai/types.py FunctionDeclaration: no eager_input_streaming (an Anthropic tool field; the package has "
        "no Anthropic route)"
    ),
    "defer_loading": (
        "google-genai 3.3.0 google/genai/types.py FunctionDeclaration and Tool: no defer_loading and no tool search (no 'defer_loading' or "
        "'tool_search' anywhere in the package)"
    ),
    "namespace": (
        "google-genai 3.3.0 google/genai/types.py FunctionDeclaration: name, description, parameters; no namespace (an OpenAI Responses "
        "tool group)"
    ),
    "result_parts": (
        "google-genai 3.3.0 google/genai/types.py FunctionResponsePart: inline_data and file_data only (images, files); a part of another "
        "kind has no form"
    ),
    "hosted": (
        "google-genai 3.3.0 google/genai/types.py Tool: google_search is the one hosted search (no tool search); "
        "FunctionCallingConfig.allowed_function_names names function declarations only, so no tool_choice forces the search (REQUIRED "
        "grounding)"
    ),
    "api": "this driver's routes are the Gemini API only (clients/google-genai.toml); google-genai 3.3.0 speaks no other wire format",
}


if __name__ == "__main__":
    td.serve(call, supports=["thinking", "result_parts", "hosted"], unsupported=UNSUPPORTED)
