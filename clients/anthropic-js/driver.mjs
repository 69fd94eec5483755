// tooltape driver for the official Anthropic TypeScript SDK (`@anthropic-ai/sdk` on npm):
// Messages, buffered (`messages.create`) and streamed (`messages.stream()`, whose accumulated
// final message is the result; its raw events are the chunks). Tools are the API's own JSON tool
// objects, as the SDK's README shows. Tool results given as parts (`result_parts`) go as
// `tool_result` content blocks (`text`, `image` with a base64 or url source); hosted web search
// (`hosted`) as the SDK's `web_search_20250305` server tool, REQUIRED grounding as
// `tool_choice: {type: "tool", name: "web_search"}` (the Messages API's way to force a tool); a
// tool the caller asks to stream eagerly carries `eager_input_streaming: true` (a field of the
// SDK's `Tool` type: Anthropic's fine-grained tool streaming). The
// package is imported from the install folder ($TOOLTAPE_CLIENT_DIR); the protocol loop is
// clients/node/tooltape_driver.mjs.
//
// Thinking (`thinking`) is `thinking: {type: "enabled", budget_tokens: N}` with the trial's
// budget. Across rounds, thinking on or off, the driver keeps what Anthropic's tool-use and
// extended-thinking docs tell a caller to keep (docs.anthropic.com/en/docs/build-with-claude/
// extended-thinking, "Preserving thinking blocks"): the response's `content` as it came (thinking
// blocks with their signatures, redacted_thinking blocks, text, tool_use), appended as the
// assistant turn (`{role: "assistant", content: response.content}`), buffered or streamed (the
// stream's accumulated final message). The blocks are the result's `reasoning` (`[{anthropic:
// [...]}]`) and take the place of the protocol's neutral copy of that turn.
// Programmatic calls (class 30): a tool's `allowed_callers` (Tool.allowed_callers, `programmatic` written
// as the trial's code-execution tool type) beside that tool; the kept content carries the code's
// `server_tool_use` and each call's `caller`, and the answer's `container` is named on the next request.
import {
  argumentsObject as argsObject,
  convertParts,
  importInstalled,
  parameters,
  serve,
  Unsupported,
} from "../node/tooltape_driver.mjs";

const { default: Anthropic } = await importInstalled("@anthropic-ai/sdk");

/** A tool result's content: its parts as content blocks when given as parts, else its text. */
function resultContent(m) {
  if (!m.parts?.length) return m.content ?? "";
  return convertParts(m.parts, {
    text: (text) => ({ type: "text", text }),
    image: (mediaType, data) => ({ type: "image", source: { type: "base64", media_type: mediaType, data } }),
    image_url: (url) => ({ type: "image", source: { type: "url", url } }),
  });
}

function messagesOf(messages) {
  const system = [];
  const out = [];
  for (const m of messages) {
    if (m.role === "system") system.push(m.content ?? "");
    // The content the SDK returned for this turn, as it came.
    else if (m.role === "assistant" && m.reasoning?.[0]?.anthropic) out.push({ role: "assistant", content: m.reasoning[0].anthropic });
    else if (m.role === "assistant") {
      const blocks = [];
      if (m.content) blocks.push({ type: "text", text: m.content });
      for (const c of m.tool_calls ?? []) blocks.push({ type: "tool_use", id: c.id, name: c.name, input: argsObject(c.arguments) });
      out.push({ role: "assistant", content: blocks });
    } else if (m.role === "tool") {
      const block = { type: "tool_result", tool_use_id: m.call_id, content: resultContent(m) };
      if (m.is_error) block.is_error = true;
      // Consecutive results are one user turn.
      const last = out[out.length - 1];
      if (last?.role === "user" && Array.isArray(last.content)) last.content.push(block);
      else out.push({ role: "user", content: [block] });
    } else out.push({ role: "user", content: m.content ?? "" });
  }
  return { system: system.join("\n\n"), messages: out };
}

/** Anthropic's tool-search server tools, each with the name its type fixes (resources/messages/
 * messages.d.ts ToolSearchToolRegex20251119, ToolSearchToolBm25_20251119). */
const SEARCHES = {
  tool_search_tool_regex_20251119: "tool_search_tool_regex",
  tool_search_tool_bm25_20251119: "tool_search_tool_bm25",
};

function params(t, messages) {
  const { system, messages: msgs } = messagesOf(messages);
  const p = { model: t.model, messages: msgs, max_tokens: t.max_tokens ?? 1024 };
  if (system) p.system = system;
  if (t.tools.length)
    p.tools = t.tools.map((x) => {
      // The schema a caller of a pass-through SDK writes: strict's dialect when strict.
      const tool = { name: x.name, input_schema: parameters(t, x) };
      if (x.description != null) tool.description = x.description;
      if (t.strict) tool.strict = true;
      if (x.eager_input_streaming) tool.eager_input_streaming = true;
      // Tool.defer_loading: loaded when the tool search finds it.
      if (x.defer_loading) tool.defer_loading = true;
      // Tool.allowed_callers: `direct`, or the code-execution tool's type (class 30).
      if (x.allowed_callers?.length) tool.allowed_callers = x.allowed_callers.map((c) => (c === "programmatic" ? runner(t) : c));
      return tool;
    });
  // Hosted web search and tool search: the SDK's server tools beside the functions.
  const hosted = t.hosted ?? [];
  for (const h of hosted) {
    if (h.type === "tool_search" && SEARCHES[h.variant]) {
      (p.tools ??= []).push({ type: h.variant, name: SEARCHES[h.variant] });
      continue;
    }
    if (h.type === "programmatic" && RUNNERS.includes(h.variant)) {
      (p.tools ??= []).push({ type: h.variant, name: "code_execution" });
      continue;
    }
    if (h.type !== "web_search") throw new Unsupported([`hosted ${h.type} ${h.variant}`]);
    (p.tools ??= []).push({ type: "web_search_20250305", name: "web_search" });
  }
  const required = hosted.some((h) => h.grounding === "required");
  const c = t.tool_choice;
  let choice = null;
  if (required && c != null && c !== "auto") throw new Unsupported(["hosted grounding required with tool_choice"]);
  if (required) choice = { type: "tool", name: "web_search" };
  else if (c === "auto" || c === "none") choice = { type: c };
  else if (c === "required") choice = { type: "any" };
  else if (c && "name" in c) choice = { type: "tool", name: c.name };
  else if (c) throw new Unsupported(["tool_choice allowed"]);
  if (t.parallel_tool_calls === false) {
    choice ??= { type: "auto" };
    if (choice.type !== "none") choice.disable_parallel_tool_use = true;
  }
  if (choice) p.tool_choice = choice;
  if (t.thinking != null) p.thinking = { type: "enabled", budget_tokens: t.thinking };
  // The container the last answer's code ran in (MessageCreateParams.container), named again.
  const containers = messages.map((m) => (m.role === "assistant" ? m.reasoning?.[0]?.container : null)).filter(Boolean);
  if (containers.length) p.container = containers[containers.length - 1];
  return p;
}

// Anthropic's code-execution tools, the runners of programmatic calls (messages.d.ts
// CodeExecutionTool20250825, CodeExecutionTool20260120).
const RUNNERS = ["code_execution_20250825", "code_execution_20260120"];

/** The trial's code-execution tool type: what a tool's `allowed_callers` names for code. */
function runner(t) {
  return (t.hosted ?? []).find((h) => h.type === "programmatic")?.variant;
}

/** The result document, with the returned content kept for the next round. */
function resultOf(msg) {
  const content = msg.content ?? [];
  return {
    // Message.container: the code execution's container, to name on the next request.
    reasoning: [{ anthropic: JSON.parse(JSON.stringify(content)), ...(msg.container ? { container: msg.container.id } : {}) }],
    calls: content.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, arguments: b.input })),
    text: content.filter((b) => b.type === "text").map((b) => b.text).join("") || null,
    finish: msg.stop_reason ?? null,
    usage: msg.usage ? { input_tokens: msg.usage.input_tokens ?? null, output_tokens: msg.usage.output_tokens ?? null } : null,
  };
}

/** One stream event as a protocol chunk; `calls` (a Set, one per stream) holds the indices of
 * client `tool_use` blocks, whose `input_json_delta`s are call arguments (a server tool's, the
 * hosted search's query, are not). */
function chunkOf(ev, calls) {
  if (ev.type === "content_block_start" && ev.content_block?.type === "tool_use") {
    calls.add(ev.index);
    const head = { index: ev.index, id: ev.content_block.id, name: ev.content_block.name };
    if (ev.content_block.input && Object.keys(ev.content_block.input).length) head.arguments = ev.content_block.input;
    return { calls: [head] };
  }
  if (ev.type === "content_block_delta" && ev.delta?.type === "input_json_delta" && calls.has(ev.index))
    return { calls: [{ index: ev.index, arguments: ev.delta.partial_json }] };
  if (ev.type === "content_block_delta" && ev.delta?.type === "text_delta") return { text: ev.delta.text };
  if (ev.type === "message_delta" && ev.delta?.stop_reason) return { finish: ev.delta.stop_reason };
  return null;
}

async function call(t, messages) {
  if (t.api !== "anthropic") throw new Unsupported(["api " + t.api]);
  // maxRetries 0: a 5xx or 429 case is judged on the first answer, not after the SDK's backoff.
  const client = new Anthropic({ baseURL: t.base_url, apiKey: t.api_key, maxRetries: 0 });
  const p = params(t, messages);
  if (!t.stream) return resultOf(await client.messages.create(p));
  const stream = client.messages.stream(p);
  const chunks = [];
  const calls = new Set();
  for await (const ev of stream) {
    const doc = chunkOf(ev, calls);
    if (doc) chunks.push(doc);
  }
  return { ...resultOf(await stream.finalMessage()), chunks };
}

// Why each entry this driver answers `unsupported` for is not expressible through
// @anthropic-ai/sdk 1.14.0 (its installed resources/messages/messages.d.ts, the Messages API's params).
const UNSUPPORTED = {
  continue_with:
    "@anthropic-ai/sdk 1.14.0 resources/messages/messages.d.ts MessageCreateParamsBase: no previous_response_id (an OpenAI Responses field); every Messages call carries the whole conversation",
  caller_tools: "@anthropic-ai/sdk 1.14.0 resources/messages/messages.d.ts ToolUnion: Anthropic's tool and server-tool types only; no OpenAI custom (freeform/grammar) tool",
  round_routes: "@anthropic-ai/sdk 1.14.0 client.d.ts Anthropic: one provider's client (the Messages API), no other provider to continue on",
  compaction:
    "@anthropic-ai/sdk 1.14.0 documents compaction only in the beta namespace (client.beta.messages, resources/beta/messages/messages.d.ts BetaContextManagementConfig with BetaCompact20260112Edit); MessageCreateParamsBase (client.messages, this driver's call) has no context_management. DRIVER GAP, not a library limit: the case does not say how to ask, and this driver does not yet call client.beta.messages",
  namespace: "@anthropic-ai/sdk 1.14.0 resources/messages/messages.d.ts Tool: no namespace (an OpenAI Responses tool group); ToolUnion has no namespace type",
  "hosted tool_search tool_search":
    "@anthropic-ai/sdk 1.14.0 resources/messages/messages.d.ts ToolUnion: its tool searches are ToolSearchToolRegex20251119 and ToolSearchToolBm25_20251119; OpenAI's `tool_search` is no Messages tool",
  hosted: "@anthropic-ai/sdk 1.14.0 resources/messages/messages.d.ts ToolUnion: the server tools it lists (web search, web fetch, tool search, code execution, ...); none other",
  "hosted grounding required with tool_choice":
    "@anthropic-ai/sdk 1.14.0 resources/messages/messages.d.ts ToolChoice: one choice per request (auto, any, tool NAME, none); forcing the web search (tool web_search) leaves no room for the trial's own tool_choice",
  "tool_choice allowed": "@anthropic-ai/sdk 1.14.0 resources/messages/messages.d.ts ToolChoice: ToolChoiceAuto | ToolChoiceAny | ToolChoiceTool (one name) | ToolChoiceNone; no allowed-tools subset",
  api: "this driver's route is the Messages API only (clients/anthropic-js.toml); @anthropic-ai/sdk 1.14.0 speaks no other wire format",
};

await serve(call, {
  supports: ["thinking", "result_parts", "hosted", "eager_input_streaming", "defer_loading", "allowed_callers"],
  unsupported: UNSUPPORTED,
});
