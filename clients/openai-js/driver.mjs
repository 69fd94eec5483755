// tooltape driver for the official OpenAI JavaScript SDK (`openai` on npm): Chat Completions and
// Responses, buffered (`create`) and streamed (the SDK's `stream()` helpers, whose accumulated
// final completion or response is the result; their raw chunks and events are the chunks). Tools
// are the API's own JSON tool objects, as the SDK's README shows. The package is imported from
// the install folder ($TOOLTAPE_CLIENT_DIR); the protocol loop is clients/node/tooltape_driver.mjs.
//
// Optional protocol features, as the Python SDK's driver: tool results given as parts
// (`result_parts`) go as the API's content parts (Chat: a tool message's text parts, the only
// parts a `role: tool` message takes; Responses: `function_call_output.output` as
// `input_text`/`input_image`); on the Responses route a trial continued by `previous_response_id`
// (`continue_with`) sends only the round's results with `previous_response_id`; hosted web search
// (`hosted`, Responses only: Chat has no hosted tool in `tools`) as `{type: "web_search"}`,
// REQUIRED grounding as the one hosted `tool_choice` the SDK types offer for search,
// `{type: "web_search_preview"}` with that tool; the caller's own wire tools (`caller_tools`,
// OpenAI `custom` tools) beside the functions as they are.
//
// Thinking (`thinking`), as OpenAI's reasoning guide documents it (platform.openai.com/docs/guides/
// reasoning): Responses `reasoning: {effort: "low"}` (an effort, not a token budget: the budget is
// not carried); unless the trial continues by `previous_response_id`, `store: false` with
// `include: ["reasoning.encrypted_content"]`, the guide's stateless way to keep reasoning items,
// the response's `output` items being the next round's input as they are (`input.push(...
// response.output)`), each reasoning item going back before its call with its `encrypted_content`.
// Chat `reasoning_effort: "low"`, the returned message appended as it is; Chat returns no opaque
// reasoning state, so nothing beyond the message is carried back.
//
// On every route, thinking on or off, the next round's history is what the SDK returned: the
// returned items (the response's output, the completion's message) are the result's `reasoning`
// (`[{openai: [...]}]`) and take the place of the protocol's neutral copy of that assistant turn.
import {
  argumentsText as argsText,
  chatChunk,
  continued,
  convertParts,
  importInstalled,
  parameters as schemaOf,
  responsesEvent,
  serve,
  Unsupported,
} from "../node/tooltape_driver.mjs";

const { default: OpenAI } = await importInstalled("openai");

/** A tool result's parts as Chat content parts: text only (Chat's tool message takes no image). */
const chatParts = (parts) => convertParts(parts, { text: (text) => ({ type: "text", text }) });

/** A tool result's parts as a Responses `function_call_output.output` list. */
const responsesParts = (parts) =>
  convertParts(parts, {
    text: (text) => ({ type: "input_text", text }),
    image: (mediaType, data) => ({ type: "input_image", image_url: `data:${mediaType};base64,${data}` }),
    image_url: (url) => ({ type: "input_image", image_url: url }),
  });

/** The items the SDK returned for this assistant turn, or undefined. */
const kept = (m) => (m.role === "assistant" ? m.reasoning?.[0]?.openai : undefined);

/** The SDK's returned objects as the result's `reasoning`, for the next round. */
const returned = (items) => [{ openai: JSON.parse(JSON.stringify(items)) }];

function chatMessages(messages) {
  return messages.map((m) => {
    if (kept(m)) return kept(m)[0];
    if (m.role === "assistant") {
      const msg = { role: "assistant", content: m.content ?? null };
      if (m.tool_calls?.length)
        msg.tool_calls = m.tool_calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: argsText(c.arguments) },
        }));
      return msg;
    }
    if (m.role === "tool")
      return { role: "tool", tool_call_id: m.call_id, content: m.parts?.length ? chatParts(m.parts) : m.content ?? "" };
    return { role: m.role, content: m.content ?? "" };
  });
}

function chatParams(t, messages) {
  const p = { model: t.model, messages: chatMessages(messages) };
  if (t.tools.length)
    p.tools = t.tools.map((x) => {
      const f = { name: x.name, parameters: schemaOf(t, x) };
      if (x.description != null) f.description = x.description;
      if (t.strict) f.strict = true;
      return { type: "function", function: f };
    });
  if (t.hosted?.length) throw new Unsupported(["hosted"]);
  // Deferred and namespaced tools and compaction: Chat's own types have none.
  const chatless = ["defer_loading", "namespace", "allowed_callers"].filter((k) => t.tools.some((x) => x[k]));
  if (t.compaction) chatless.push("compaction");
  if (chatless.length) throw new Unsupported(chatless, CHAT_CITE);
  if (t.caller_tools?.length) (p.tools ??= []).push(...t.caller_tools);
  const c = t.tool_choice;
  if (typeof c === "string") p.tool_choice = c;
  else if (c && "name" in c) p.tool_choice = { type: "function", function: { name: c.name } };
  else if (c)
    p.tool_choice = {
      type: "allowed_tools",
      allowed_tools: { mode: c.mode ?? "auto", tools: c.allowed.map((name) => ({ type: "function", function: { name } })) },
    };
  if (t.parallel_tool_calls != null) p.parallel_tool_calls = t.parallel_tool_calls;
  if (t.max_tokens != null) p.max_tokens = t.max_tokens;
  if (t.thinking != null) p.reasoning_effort = "low";
  return p;
}

function chatResult(choice, usage) {
  const m = choice?.message ?? {};
  return {
    calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function?.name, arguments: c.function?.arguments })),
    // A refusal is the model's text, in a field of its own.
    text: m.content || m.refusal || null,
    finish: choice?.finish_reason ?? null,
    usage: usage ? { input_tokens: usage.prompt_tokens ?? null, output_tokens: usage.completion_tokens ?? null } : null,
  };
}

async function chat(client, t, messages) {
  const p = chatParams(t, messages);
  if (!t.stream) {
    const r = await client.chat.completions.create(p);
    const result = chatResult(r.choices[0], r.usage);
    return { ...result, reasoning: returned([r.choices[0].message]) };
  }
  const stream = client.chat.completions.stream({ ...p, stream_options: { include_usage: true } });
  const chunks = [];
  for await (const chunk of stream) {
    const doc = chatChunk(chunk);
    if (doc) chunks.push(doc);
  }
  const final = await stream.finalChatCompletion();
  const result = { ...chatResult(final.choices[0], final.usage), chunks };
  return { ...result, reasoning: returned([final.choices[0].message]) };
}

/** The Responses function tools (FunctionTool, with its `defer_loading`), a tool in a namespace
 * inside that namespace's NamespaceTool (`{type: "namespace", name, tools}`), in the trial's order. */
function functionTools(t) {
  const out = [];
  const spaces = new Map();
  for (const x of t.tools) {
    const f = { type: "function", name: x.name, description: x.description ?? null, parameters: schemaOf(t, x), strict: Boolean(t.strict) };
    if (x.defer_loading) f.defer_loading = true;
    // FunctionTool.allowed_callers: `direct`, `programmatic` (class 30).
    if (x.allowed_callers?.length) f.allowed_callers = x.allowed_callers;
    if (!x.namespace) out.push(f);
    else if (spaces.has(x.namespace)) spaces.get(x.namespace).tools.push(f);
    else {
      const space = { type: "namespace", name: x.namespace, tools: [f] };
      spaces.set(x.namespace, space);
      out.push(space);
    }
  }
  return out;
}

function responsesParams(t, all) {
  const { previous, sent: messages } = continued(t, all);
  const input = [];
  const instructions = [];
  for (const m of messages) {
    if (m.role === "system") instructions.push(m.content ?? "");
    // An assistant turn the SDK answered goes back as its output items, as they came.
    else if (kept(m)) input.push(...kept(m));
    else if (m.role === "assistant") {
      if (m.content) input.push({ role: "assistant", content: m.content });
      for (const c of m.tool_calls ?? [])
        input.push({ type: "function_call", call_id: c.id, name: c.name, arguments: argsText(c.arguments) });
    } else if (m.role === "tool") {
      const output = m.parts?.length ? responsesParts(m.parts) : m.content ?? "";
      input.push({ type: "function_call_output", call_id: m.call_id, output });
    }
    else input.push({ role: "user", content: m.content ?? "" });
  }
  const p = { model: t.model, input };
  if (instructions.length) p.instructions = instructions.join("\n\n");
  if (t.tools.length) p.tools = functionTools(t);
  if (previous) p.previous_response_id = previous;
  // Server-side compaction, as the SDK's `context_management` documents it; the compaction item
  // it answers goes back with the response's other output items.
  if (t.compaction) p.context_management = [{ type: "compaction" }];
  // Hosted web search beside the functions; REQUIRED forces it with the hosted tool_choice.
  const required = (t.hosted ?? []).some((h) => h.grounding === "required");
  for (const h of t.hosted ?? []) {
    // The Responses Tool `programmatic_tool_calling`: the runner of the functions' programs.
    if (h.type === "programmatic" && h.variant === "programmatic_tool_calling") {
      (p.tools ??= []).push({ type: "programmatic_tool_calling" });
      continue;
    }
    // ToolSearchTool: the hosted search over the deferred functions.
    if (h.type === "tool_search" && h.variant === "tool_search") {
      (p.tools ??= []).push({ type: "tool_search" });
      continue;
    }
    if (h.type !== "web_search") throw new Unsupported([`hosted ${h.type} ${h.variant}`]);
    (p.tools ??= []).push({ type: required ? "web_search_preview" : "web_search" });
  }
  if (t.caller_tools?.length) (p.tools ??= []).push(...t.caller_tools);
  const c = t.tool_choice;
  if (required && c != null && c !== "auto") throw new Unsupported(["hosted grounding required with tool_choice"]);
  if (required) p.tool_choice = { type: "web_search_preview" };
  else if (typeof c === "string") p.tool_choice = c;
  else if (c && "name" in c) p.tool_choice = { type: "function", name: c.name };
  else if (c)
    p.tool_choice = { type: "allowed_tools", mode: c.mode ?? "auto", tools: c.allowed.map((name) => ({ type: "function", name })) };
  if (t.parallel_tool_calls != null) p.parallel_tool_calls = t.parallel_tool_calls;
  if (t.max_tokens != null) p.max_output_tokens = t.max_tokens;
  if (t.thinking != null) {
    p.reasoning = { effort: "low" };
    if (t.continue_with == null) {
      p.store = false;
      p.include = ["reasoning.encrypted_content"];
    }
  }
  return p;
}

function responsesResult(r) {
  const output = r.output ?? [];
  const parts = output.filter((i) => i.type === "message").flatMap((i) => i.content ?? []);
  const text = parts.filter((p) => p.type === "output_text").map((p) => p.text ?? "").join("");
  const refusal = parts.filter((p) => p.type === "refusal").map((p) => p.refusal ?? "").join("");
  let finish = r.status ?? null;
  if (finish === "incomplete" && r.incomplete_details) finish = r.incomplete_details.reason;
  return {
    calls: output.filter((i) => i.type === "function_call").map((i) => ({ id: i.call_id, name: i.name, arguments: i.arguments })),
    text: text || refusal || null,
    finish,
    usage: r.usage ? { input_tokens: r.usage.input_tokens ?? null, output_tokens: r.usage.output_tokens ?? null } : null,
  };
}

async function responses(client, t, messages) {
  const p = responsesParams(t, messages);
  if (!t.stream) {
    const r = await client.responses.create(p);
    const result = { ...responsesResult(r), response_id: r.id };
    return { ...result, reasoning: returned(r.output) };
  }
  const stream = client.responses.stream(p);
  const chunks = [];
  const seen = new Set();
  for await (const ev of stream) {
    const doc = responsesEvent(ev, seen);
    if (doc) chunks.push(doc);
  }
  const final = await stream.finalResponse();
  const result = { ...responsesResult(final), response_id: final.id, chunks };
  return { ...result, reasoning: returned(final.output) };
}

async function call(t, messages) {
  // maxRetries 0: a 5xx or 429 case is judged on the first answer, not after the SDK's backoff.
  const client = new OpenAI({ baseURL: t.base_url + "/v1", apiKey: t.api_key, maxRetries: 0 });
  if (t.api === "openai-chat") return chat(client, t, messages);
  if (t.api === "openai-responses") return responses(client, t, messages);
  throw new Unsupported(["api " + t.api]);
}

// Deferred and namespaced tools and compaction on the Chat route: Chat's own types have none.
const CHAT_CITE =
  "openai 6.49.0 resources/shared.d.ts FunctionDefinition (a Chat tool's function): name, description, parameters, strict; no defer_loading, namespace or allowed_callers, and resources/chat/completions/completions.d.ts ChatCompletionCreateParamsBase has no context_management: tool search, namespaces, programmatic calls and compaction are the Responses API's (resources/responses/responses.d.ts FunctionTool.defer_loading, NamespaceTool, ResponseCreateParams.context_management)";

// Why each entry this driver answers `unsupported` for is not expressible through openai 6.49.0
// (its installed .d.ts, the APIs' params).
const UNSUPPORTED = {
  round_routes: "openai 6.49.0 client.d.ts OpenAI: one provider's client (OpenAI's Chat Completions and Responses), no other provider to continue on",
  eager_input_streaming:
    "openai 6.49.0 resources/responses/responses.d.ts FunctionTool and resources/shared.d.ts FunctionDefinition: no eager_input_streaming (an Anthropic tool field; the SDK has no Anthropic route)",
  "hosted tool_search":
    "openai 6.49.0 resources/responses/responses.d.ts ToolSearchTool: `type: tool_search` is OpenAI's one tool search; Anthropic's tool_search_tool_regex/bm25_20251119 are no Responses Tool",
  hosted:
    "openai 6.49.0 resources/chat/completions/completions.d.ts ChatCompletionCreateParamsBase.tools: Chat Completions takes function and custom tools only (hosted tools are the Responses API's Tool); on Responses the web search and tool_search are the hosted tools this driver sends",
  "hosted grounding required with tool_choice":
    "openai 6.49.0 resources/responses/responses.d.ts ResponseCreateParams.tool_choice: one tool_choice per request; forcing the web search (ToolChoiceTypes web_search_preview) leaves no room for the trial's own tool_choice",
  api: "this driver's routes are Chat Completions and Responses (clients/openai-js.toml); openai 6.49.0 speaks no other wire format",
};

await serve(call, {
  supports: ["thinking", "result_parts", "continue_with", "hosted", "caller_tools", "defer_loading", "namespace", "compaction", "allowed_callers"],
  unsupported: UNSUPPORTED,
});
