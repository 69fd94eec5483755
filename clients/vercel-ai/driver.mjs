// tooltape driver for the Vercel AI SDK (`ai` with `@ai-sdk/openai`, `/anthropic`, `/google`):
// generateText and streamText with tools that have no `execute` (the caller runs them), the
// parallel switch as each provider's option. Streamed: every fullStream part is a chunk; the
// result is what the finished stream resolves (`toolCalls`, `text`, `finishReason`, `usage`).
// The packages are imported from the install folder ($TOOLTAPE_CLIENT_DIR); the protocol loop is
// clients/node/tooltape_driver.mjs.
//
// Optional protocol features: tool results given as parts (`result_parts`) are the SDK's portable
// `content` tool output (`text` and `file` parts, an image's bytes as `{type: "data"}` or its URL
// as `{type: "url"}`); hosted web search (`hosted`) is each provider's provider-defined tool, the
// SDK's documented way to use a provider's server tools (`openai.tools.webSearch()` on the
// Responses model, `anthropic.tools.webSearch_20250305()`, `google.tools.googleSearch()`; the
// Chat model documents none), REQUIRED grounding `toolChoice: {type: "tool", toolName}` on it
// (Gemini cannot force a search: not expressible); on the Responses route a trial continued by
// `previous_response_id` (`continue_with`) sends only the round's results with
// `providerOptions.openai.previousResponseId`, the answer's `providerMetadata.openai.responseId`
// handed back as `response_id`. Thinking (`thinking`) is the SDK's portable top-level `reasoning`
// setting (docs 03-ai-sdk-core/26-reasoning: one value for every provider, each provider mapping it
// to its own API); it takes an effort level, not a token budget (the docs send exact budgets to
// `providerOptions`, which is per provider), so the driver asks `reasoning: "low"` and the trial's
// budget is not carried. On every route, thinking on or off, the answer's `response.messages`
// (the assistant message with its reasoning parts and their provider metadata: signatures,
// encrypted content, thought signatures), which the SDK's docs have callers append to their
// history, are handed over as the result's `reasoning` (`[{vercel_ai: messages}]`) and go back as
// they are in the next round: the same code for every provider.
// A tool the caller asks to stream eagerly on the Anthropic route
// (`eager_input_streaming`) carries the tool's `providerOptions.anthropic.eagerInputStreaming`
// (@ai-sdk/anthropic's `AnthropicToolOptions`, CHANGELOG 3.0.58 "support eagerInputStreaming
// option for fine-grained tool streaming"); streamed, the SDK makes every tool eager of its own
// accord (its `toolStreaming` option, default true).
import { argumentsObject as args, continued, convertParts, importInstalled, mcpAnswered, mcpClose, mcpState, serve, Unsupported } from "../node/tooltape_driver.mjs";

const ai = await importInstalled("ai");
const { createOpenAI } = await importInstalled("@ai-sdk/openai");
const { createAnthropic } = await importInstalled("@ai-sdk/anthropic");
const { createGoogleGenerativeAI } = await importInstalled("@ai-sdk/google");
const { createMCPClient } = await importInstalled("@ai-sdk/mcp");

/** The provider instance of the trial's route. */
function providerOf(t) {
  const key = t.api_key;
  switch (t.api) {
    case "openai-chat":
    case "openai-responses":
      return createOpenAI({ baseURL: t.base_url + "/v1", apiKey: key });
    case "anthropic":
      return createAnthropic({ baseURL: t.base_url + "/v1", apiKey: key });
    case "gemini":
      return createGoogleGenerativeAI({ baseURL: t.base_url + "/v1beta", apiKey: key });
    default:
      throw new Unsupported(["api " + t.api]);
  }
}

function modelOf(t, provider) {
  if (t.api === "openai-chat") return provider.chat(t.model);
  if (t.api === "openai-responses") return provider.responses(t.model);
  return provider(t.model);
}

/** The provider-defined web search tool, by the name the provider's docs give it. */
function searchTool(t, provider) {
  if (t.api === "openai-responses") return ["web_search", provider.tools.webSearch({})];
  if (t.api === "anthropic") return ["web_search", provider.tools.webSearch_20250305({})];
  if (t.api === "gemini") return ["google_search", provider.tools.googleSearch({})];
  throw new Unsupported(["hosted"]);
}

/** A tool result's parts as the SDK's `content` tool output. */
const contentOutput = (parts) => ({
  type: "content",
  value: convertParts(parts, {
    text: (text) => ({ type: "text", text }),
    image: (mediaType, data) => ({ type: "file", mediaType, data: { type: "data", data } }),
    image_url: (url) => ({ type: "file", mediaType: "image", data: { type: "url", url: new URL(url) } }),
  }),
});

function messagesOf(messages) {
  const names = {};
  return messages.flatMap((m) => {
    if (m.role === "system") return { role: "system", content: m.content ?? "" };
    const kept = m.role === "assistant" ? m.reasoning?.[0]?.vercel_ai : null;
    if (kept) {
      // The response messages the SDK returned, as its caller appends them.
      for (const c of m.tool_calls ?? []) names[c.id] = c.name;
      return kept;
    }
    if (m.role === "assistant") {
      const content = [];
      if (m.content) content.push({ type: "text", text: m.content });
      for (const c of m.tool_calls ?? []) {
        names[c.id] = c.name;
        content.push({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: args(c.arguments) });
      }
      return { role: "assistant", content };
    }
    if (m.role === "tool") {
      const output = m.vercel_ai_output
        ? m.vercel_ai_output
        : m.is_error
        ? { type: "error-text", value: m.content ?? "" }
        : m.parts?.length
          ? contentOutput(m.parts)
          : { type: "text", value: m.content ?? "" };
      return {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: m.call_id, toolName: m.name ?? names[m.call_id], output }],
      };
    }
    return { role: "user", content: m.content ?? "" };
  });
}

function optionsOf(t, session) {
  const provider = providerOf(t);
  const o = { model: modelOf(t, provider), maxRetries: 0 };
  if (session) o.tools = mcpTools(t, session);
  else if (t.tools.length) {
    o.tools = {};
    for (const x of t.tools) {
      const def = { inputSchema: ai.jsonSchema(x.parameters) };
      if (x.description != null) def.description = x.description;
      if (t.strict) def.strict = true;
      const options = toolOptions(t, x);
      if (options) def.providerOptions = options;
      o.tools[x.name] = ai.tool(def);
    }
  }
  const c = t.tool_choice;
  let search = null;
  for (const h of t.hosted ?? []) {
    if (h.type === "tool_search") {
      const [name, def] = toolSearchOf(t, provider, h.variant);
      (o.tools ??= {})[name] = def;
      continue;
    }
    if (h.type === "programmatic") {
      const [name, def] = runnerOf(t, provider, h.variant);
      (o.tools ??= {})[name] = def;
      continue;
    }
    if (h.type !== "web_search") throw new Unsupported(["hosted " + h.type]);
    const [name, def] = searchTool(t, provider);
    (o.tools ??= {})[name] = def;
    if (h.grounding === "required") search = name;
  }
  if (search && t.api === "gemini") throw new Unsupported(["hosted grounding required"]);
  if (search && c != null && c !== "auto") throw new Unsupported(["hosted grounding required with tool_choice"]);
  if (c && typeof c === "object" && "allowed" in c) throw new Unsupported(["tool_choice allowed"]);
  if (search) o.toolChoice = { type: "tool", toolName: search };
  else if (c && typeof c === "object") o.toolChoice = { type: "tool", toolName: c.name };
  else if (c != null) o.toolChoice = c;
  // The AI SDK has no portable parallel switch; its docs give each provider's `providerOptions`
  // as the way to say it (the driver rule's one exception, docs/clients/README.md).
  if (t.parallel_tool_calls != null) {
    if (t.api === "openai-chat" || t.api === "openai-responses") o.providerOptions = { openai: { parallelToolCalls: t.parallel_tool_calls } };
    else if (t.api === "anthropic") o.providerOptions = { anthropic: { disableParallelToolUse: !t.parallel_tool_calls } };
    // Gemini has no parallel switch: nothing to send.
  }
  if (t.max_tokens != null) o.maxOutputTokens = t.max_tokens;
  if (t.thinking != null) o.reasoning = "low";
  if (t.compaction) compactionOf(t, o);
  return o;
}

/** A tool's provider options: on the Anthropic route `eagerInputStreaming` and `deferLoading`
 * (@ai-sdk/anthropic's tool options), on the Responses route `deferLoading` and `namespace`
 * (@ai-sdk/openai's OpenAIToolOptions, whose namespace asks a description the trial does not
 * give: the namespace's name is its description); null when there are none. */
function toolOptions(t, x) {
  const callers = x.allowed_callers?.length ? x.allowed_callers : null;
  if (t.api === "anthropic" && (x.eager_input_streaming || x.defer_loading || callers)) {
    const a = {};
    if (x.eager_input_streaming) a.eagerInputStreaming = true;
    if (x.defer_loading) a.deferLoading = true;
    // AnthropicToolOptions.allowedCallers: `direct`, or the code-execution tool's type (class 30).
    if (callers) a.allowedCallers = callers.map((c) => (c === "programmatic" ? runnerType(t) : c));
    return { anthropic: a };
  }
  if (t.api === "openai-responses" && (x.defer_loading || x.namespace || callers)) {
    const o = {};
    if (x.defer_loading) o.deferLoading = true;
    if (x.namespace) o.namespace = { name: x.namespace, description: x.namespace };
    // OpenAIToolOptions.allowedCallers: `direct`, `programmatic` (class 30).
    if (callers) o.allowedCallers = callers;
    return { openai: o };
  }
  const fields = ["defer_loading", "namespace", "allowed_callers"].filter((k) => x[k]?.length ?? x[k]);
  if (fields.length) throw new Unsupported(fields.map((k) => `${k} on ${t.api}`));
  return null;
}

/** The trial's programmatic runner type (a tool's `programmatic` caller on Anthropic). */
const runnerType = (t) => (t.hosted ?? []).find((h) => h.type === "programmatic")?.variant;

/** The provider-defined runner of programmatic calls (class 30), by the name its provider gives
 * it: `anthropic.tools.codeExecution_20250825()` on the Anthropic route,
 * `openai.tools.programmaticToolCalling()` on the Responses route. */
function runnerOf(t, provider, variant) {
  if (t.api === "anthropic" && variant === "code_execution_20250825") return ["code_execution", provider.tools.codeExecution_20250825()];
  if (t.api === "openai-responses" && variant === "programmatic_tool_calling")
    return ["programmatic_tool_calling", provider.tools.programmaticToolCalling()];
  throw new Unsupported(["hosted programmatic " + variant]);
}

/** The provider-defined tool search of the trial's variant, by the name its provider gives it:
 * `openai.tools.toolSearch()` on the Responses route, `anthropic.tools.toolSearchRegex_20251119()`
 * or `toolSearchBm25_20251119()` on the Anthropic route. */
function toolSearchOf(t, provider, variant) {
  if (t.api === "openai-responses" && variant === "tool_search") return ["tool_search", provider.tools.toolSearch()];
  if (t.api === "anthropic" && variant === "tool_search_tool_regex_20251119")
    return ["tool_search_tool_regex", provider.tools.toolSearchRegex_20251119()];
  if (t.api === "anthropic" && variant === "tool_search_tool_bm25_20251119")
    return ["tool_search_tool_bm25", provider.tools.toolSearchBm25_20251119()];
  throw new Unsupported([`hosted tool_search ${variant} on ${t.api}`]);
}

/** Server-side compaction as each provider's options document it: @ai-sdk/openai's Responses
 * `contextManagement: [{type: "compaction", compactThreshold}]` (the threshold is required; the
 * trial gives none, so the driver asks 200000 tokens), @ai-sdk/anthropic's
 * `contextManagement: {edits: [{type: "compact_20260112"}]}`. */
function compactionOf(t, o) {
  let options;
  if (t.api === "openai-responses") options = { openai: { contextManagement: [{ type: "compaction", compactThreshold: 200000 }] } };
  else if (t.api === "anthropic") options = { anthropic: { contextManagement: { edits: [{ type: "compact_20260112" }] } } };
  else throw new Unsupported([`compaction on ${t.api}`]);
  const [[name, value]] = Object.entries(options);
  o.providerOptions = { ...o.providerOptions, [name]: { ...o.providerOptions?.[name], ...value } };
}

/** The caller's `previousResponseId`, beside the route's other OpenAI provider options. */
function continueFrom(o, previous) {
  if (!previous) return;
  o.providerOptions = { ...o.providerOptions, openai: { ...o.providerOptions?.openai, previousResponseId: previous } };
}

// The caller's calls: a provider-executed one (the hosted search the provider ran, flagged
// `providerExecuted` as the SDK documents) is not the caller's to run.
const callsOf = (calls) =>
  (calls ?? []).filter((c) => !c.providerExecuted).map((c) => ({ id: c.toolCallId, name: c.toolName, arguments: c.input }));
const usageOf = (u) => (u ? { input_tokens: u.inputTokens ?? null, output_tokens: u.outputTokens ?? null } : null);

/** The answer's response messages, kept for the next round as the SDK's callers append them,
 * with Anthropic's code-execution container id (its `providerMetadata.anthropic.container`). */
const kept = (response, metadata) => {
  const container = metadata?.anthropic?.container?.id;
  return [{ vercel_ai: response.messages, ...(container ? { anthropic_container: container } : {}) }];
};

/** The container the last answer's code ran in, forwarded as @ai-sdk/anthropic documents it
 * (forwardAnthropicContainerIdFromLastStep: `providerOptions.anthropic.container: {id}`). */
function forwardContainer(o, messages) {
  const ids = messages.map((m) => (m.role === "assistant" ? m.reasoning?.[0]?.anthropic_container : null)).filter(Boolean);
  if (ids.length) o.providerOptions = { ...o.providerOptions, anthropic: { ...o.providerOptions?.anthropic, container: { id: ids[ids.length - 1] } } };
}

async function call(t, messages) {
  // Tools through the SDK's MCP client: the trial's session, each result the SDK's own.
  const session = t.mcp ? await mcpState(t, messages, openMcp) : null;
  if (session) messages = await mcpAnswered(t, messages, session, "vercel_ai_output", (c) => mcpOutput(session, c));
  // System text goes in `system` (the SDK refuses system messages in `messages`).
  const { previous, sent } = continued(t, messages);
  const system = sent.filter((m) => m.role === "system").map((m) => m.content ?? "");
  const o = { ...optionsOf(t, session), messages: messagesOf(sent.filter((m) => m.role !== "system")) };
  if (system.length) o.system = system.join("\n\n");
  continueFrom(o, previous);
  forwardContainer(o, sent);
  if (!t.stream) {
    const r = await ai.generateText(o);
    return {
      calls: callsOf(r.toolCalls),
      text: r.text || null,
      finish: r.finishReason ?? null,
      usage: usageOf(r.usage),
      response_id: r.providerMetadata?.openai?.responseId ?? undefined,
      reasoning: kept(r.response, r.providerMetadata),
    };
  }
  let failure = null;
  const r = ai.streamText({ ...o, onError: ({ error }) => (failure = error) });
  const chunks = [];
  // The ids of provider-executed tool inputs: their deltas carry only the id.
  const hosted = new Set();
  for await (const p of r.fullStream) {
    if (p.providerExecuted) hosted.add(p.id ?? p.toolCallId);
    if (p.providerExecuted || hosted.has(p.id)) continue;
    if (p.type === "tool-input-start") chunks.push({ calls: [{ id: p.id, name: p.toolName }] });
    else if (p.type === "tool-input-delta") chunks.push({ calls: [{ id: p.id, arguments: p.delta }] });
    // The whole call, once its input is complete: a caller reading fullStream gets it here.
    else if (p.type === "tool-call") chunks.push({ calls: [{ id: p.toolCallId, name: p.toolName, arguments: p.input }] });
    else if (p.type === "text-delta") chunks.push({ text: p.text });
    else if (p.type === "finish") chunks.push({ finish: p.finishReason });
    else if (p.type === "error") failure = p.error;
  }
  if (failure) throw failure;
  return {
    calls: callsOf(await r.toolCalls),
    text: (await r.text) || null,
    finish: (await r.finishReason) ?? null,
    usage: usageOf(await r.usage),
    response_id: (await r.providerMetadata)?.openai?.responseId ?? undefined,
    reasoning: kept(await r.response, await r.providerMetadata),
    chunks,
  };
}

// ---- Tools through the SDK's MCP client (`mcp`) ----
//
// @ai-sdk/mcp 2.0.99 (the release built on ai 7.0.173's @ai-sdk/provider-utils 5.0.81), as the
// AI SDK's docs show it (ai docs/03-ai-sdk-core/16-mcp-tools.mdx): `createMCPClient({transport:
// {type: 'http', url}})`, then `await mcpClient.tools()` (schema discovery: every tool the server
// lists), handed to generateText / streamText as they are. Once per trial, on its first round,
// kept for its next rounds (a caller keeps one client for a conversation), closed when the next
// trial starts. What the SDK makes of the server's tools and answers (src/tool/mcp-client.ts
// `toolsFromDefinitions` and `mcpToModelOutput`):
// - each tool is a `dynamicTool` whose `inputSchema` is `jsonSchema({...inputSchema, properties:
//   inputSchema.properties ?? {}, additionalProperties: false})`, its `description` the server's;
// - its `execute` is `callTool({name, arguments})` (one `tools/call`; `maxRetries` 0 by default)
//   returning the server's CallToolResult as it is, `isError` included (the SDK does not throw for
//   it); a result with `structuredContent` and no `content` gets a text part of its JSON
//   (src/tool/types.ts CallToolResultWithStructuredContentSchema);
// - its `toModelOutput` (mcpToModelOutput) makes the result a `content` output: `text` parts as
//   text, `image` parts as `file` parts (`mediaType`, base64 `data`), any other part as a text part
//   of its JSON; `structuredContent` and `isError` are not read.
// The driver sends the tools without their `execute` (tooltape says when each call runs: with
// `execute`, generateText would run the calls in the same step) and, for each tool result of a
// `results` line, runs the call it answers through the tool's own `execute` (the docs' own
// example calls `tools[name].execute(input, {messages, toolCallId})`) and makes the model output
// as generateText makes it for a tool it ran (ai src/prompt/create-tool-model-output.ts
// createToolModelOutput: the tool's `toModelOutput` of the output; a thrown error becomes
// `{type: 'error-text', value: getErrorMessage(error)}`, src/generate-text/generate-text.ts
// `errorMode: output.type === 'tool-error' ? 'text' : 'none'`). The trial's `strict` is the tool's
// `strict` (ai's Tool.strict, read by src/prompt/prepare-tools.ts for dynamic tools too).

/** The trial's MCP state (the shared loop's `mcpState`): the SDK's client and its tools. */
async function openMcp(t) {
  const client = await createMCPClient({ transport: { type: "http", url: t.mcp.url } });
  try {
    return { client, tools: await client.tools(), close: () => client.close() };
  } catch (e) {
    await client.close().catch(() => {});
    throw e;
  }
}

/** The session's tools as sent to the model: without `execute`, strict when the trial asks. */
function mcpTools(t, s) {
  const tools = {};
  for (const [name, x] of Object.entries(s.tools)) {
    const { execute, ...def } = x;
    if (t.strict) def.strict = true;
    tools[name] = def;
  }
  return tools;
}

/** @ai-sdk/provider's getErrorMessage: a thrown error's text as the SDK sends it. */
const errorMessage = (e) => (e == null ? "unknown error" : typeof e === "string" ? e : e instanceof Error ? e.message : JSON.stringify(e));

/** One call run through its MCP tool's `execute`, its output as generateText makes it. */
async function mcpOutput(s, c) {
  const tool = s.tools[c.name];
  if (!tool) throw new Error(`the MCP client lists no tool ${JSON.stringify(c.name)} for call ${c.id}`);
  const input = args(c.arguments);
  let output;
  try {
    output = await tool.execute(input, { toolCallId: c.id, messages: [] });
  } catch (e) {
    return { type: "error-text", value: errorMessage(e) };
  }
  if (tool.toModelOutput) return await tool.toModelOutput({ toolCallId: c.id, input, output });
  return typeof output === "string" ? { type: "text", value: output } : { type: "json", value: JSON.parse(JSON.stringify(output ?? null)) };
}

// Why each entry this driver answers `unsupported` for is not expressible through ai 7.0.173 with
// @ai-sdk/openai 4.0.118, @ai-sdk/anthropic 4.0.105 and @ai-sdk/google (their installed dist/).
const UNSUPPORTED = {
  allowed_callers:
    "@ai-sdk/anthropic 7.0.173 src/anthropic-prepare-tools.ts AnthropicToolOptions.allowedCallers and @ai-sdk/openai src/responses/openai-responses-prepare-tools.ts (the Responses model's tool options) are the only allowedCallers: the Chat model's and @ai-sdk/google's tool options have none (class 30)",
  caller_tools:
    "DRIVER GAP, not a library limit: @ai-sdk/openai 4.0.118 dist/index.d.ts OpenAIProvider.tools.customTool is the SDK's OpenAI custom (freeform/grammar) tool; this driver does not yet build one from the trial's wire form",
  hosted:
    "@ai-sdk/openai 4.0.118 dist/index.js prepareChatTools: the Chat model sends function tools only (any provider tool is dropped with an `unsupported` tool-type warning), so the chat route has no hosted tool to send",
  "hosted tool_search":
    "the AI SDK's tool searches are per provider: @ai-sdk/openai 4.0.118 tools.toolSearch (OpenAI's `tool_search`, the Responses model) and @ai-sdk/anthropic 4.0.105 tools.toolSearchRegex_20251119 / toolSearchBm25_20251119; another provider's search, or a search on the Chat or Gemini model, has no tool",
  "hosted grounding required":
    "@ai-sdk/google dist/index.js prepareTools: a `{type: 'tool'}` toolChoice becomes functionCallingConfig.allowedFunctionNames, which names function declarations only; the googleSearch tool cannot be forced",
  "hosted grounding required with tool_choice":
    "ai 7.0.173 dist/index.d.ts ToolChoice: one toolChoice per call; forcing the web search (`{type: 'tool', toolName}`) leaves no room for the trial's own tool_choice",
  "tool_choice allowed":
    "ai 7.0.173 dist/index.d.ts ToolChoice: 'auto' | 'none' | 'required' | {type: 'tool', toolName}; no allowed-tools subset (the SDK's activeTools removes the other tools from the request instead; @ai-sdk/openai's providerOptions.openai.allowedTools is one provider's option)",
  "defer_loading on":
    "deferred loading is a per-provider tool option in the AI SDK: @ai-sdk/openai 4.0.118 OpenAIToolOptions.deferLoading (Responses) and @ai-sdk/anthropic 4.0.105 tool providerOptions.anthropic.deferLoading; the Chat and Gemini models have none",
  "namespace on": "@ai-sdk/openai 4.0.118 dist/index.d.ts OpenAIToolOptions.namespace is a Responses tool option; the other models have no namespace",
  "compaction on":
    "compaction is a per-provider option in the AI SDK: @ai-sdk/openai 4.0.118 Responses providerOptions.openai.contextManagement and @ai-sdk/anthropic 4.0.105 providerOptions.anthropic.contextManagement (compact_20260112); the Chat model's options (OpenAILanguageModelChatOptions) and @ai-sdk/google's have none",
  api: "this driver's routes are OpenAI Chat and Responses, Anthropic and Gemini (clients/vercel-ai.toml), each through its @ai-sdk provider",
};

await serve(call, {
  supports: ["mcp", "thinking", "result_parts", "hosted", "continue_with", "round_routes", "eager_input_streaming", "defer_loading", "namespace", "compaction", "allowed_callers"],
  unsupported: UNSUPPORTED,
});
await mcpClose();
