// tooltape driver for LangChain.js chat models (`@langchain/openai`, `@langchain/anthropic`,
// `@langchain/google-genai` with `@langchain/core`): the same portable code for every provider,
// as LangChain's docs show it: `model.bindTools(tools, { tool_choice })`, then `invoke` or
// `stream` (the streamed AIMessageChunks summed with `concat`, as the docs sum them). Only the
// model's construction is per provider. The route's `tools` option picks how tools are given:
// `tool` (the default) `tool()` from @langchain/core/tools with the JSON Schema as its schema,
// `dict` the OpenAI tool dict. `required` is LangChain's portable `"any"` (@langchain/core's
// ToolChoice type); a trial field LangChain has no portable knob for (an allowed subset, and
// parallel and strict where the provider's bindTools takes none) is not expressible. Across rounds
// the driver keeps the message list a caller keeps, as LangChain's tool-calling docs show: the
// trial's conversation as the caller wrote it, then the AIMessage `invoke` returned (streamed: the
// chunks summed with `concat`) appended as is, then a ToolMessage per result; the integration
// sends the model's turn back from that message (its thinking blocks, reasoning items, Gemini
// thought signatures). Thinking has no portable knob in LangChain: each chat model class documents
// its own, and the driver uses it where one takes a token budget (ChatAnthropic's `thinking`,
// ChatGoogleGenerativeAI's `thinkingConfig`); ChatOpenAI's `reasoning` takes an effort, not a
// budget, so thinking is not expressible on the OpenAI routes. Tool results given as parts
// (`result_parts`) are a ToolMessage whose content is LangChain's standard content blocks
// (`{type: "text"}`, `{type: "image", data, mimeType}` or `{type: "image", url}`), the same for
// every provider. A trial continued by `previous_response_id` (`continue_with`, the Responses route)
// sends only the messages after the last AIMessage with ChatOpenAI's `previous_response_id` call
// option, the AIMessage's `response_metadata.id`. Hosted web search has no portable spelling in
// LangChain (each integration documents its own server-tool dict): not wired. The packages are required
// (CommonJS, one @langchain/core instance) from the install folder ($TOOLTAPE_CLIENT_DIR); the
// protocol loop is clients/node/tooltape_driver.mjs.
import { argumentsObject as argsObject, convertParts, mcpAnswered, mcpClose, mcpState, requireInstalled, serve, Unsupported } from "../node/tooltape_driver.mjs";

const { ChatOpenAI } = requireInstalled("@langchain/openai");
const { ChatAnthropic } = requireInstalled("@langchain/anthropic");
const { ChatGoogleGenerativeAI } = requireInstalled("@langchain/google-genai");
const { AIMessage, HumanMessage, SystemMessage, ToolMessage } = requireInstalled("@langchain/core/messages");
const { tool } = requireInstalled("@langchain/core/tools");
const { MultiServerMCPClient } = requireInstalled("@langchain/mcp-adapters");
const { ToolNode } = requireInstalled("@langchain/langgraph/prebuilt");

const OPENAI = new Set(["openai-chat", "openai-responses"]);

function modelOf(t) {
  const common = { model: t.model, apiKey: t.api_key, maxRetries: 0 };
  if (t.max_tokens != null) common.maxTokens = t.max_tokens;
  switch (t.api) {
    case "openai-chat":
    case "openai-responses":
      if (t.thinking != null) throw new Unsupported(["thinking"]);
      return new ChatOpenAI({ ...common, configuration: { baseURL: t.base_url + "/v1" }, useResponsesApi: t.api === "openai-responses" });
    case "anthropic": {
      const o = { ...common, anthropicApiUrl: t.base_url };
      if (t.thinking != null) o.thinking = { type: "enabled", budget_tokens: t.thinking };
      return new ChatAnthropic(o);
    }
    case "gemini": {
      const { maxTokens, ...rest } = common;
      const o = { ...rest, baseUrl: t.base_url, apiVersion: "v1beta" };
      if (maxTokens != null) o.maxOutputTokens = maxTokens;
      if (t.thinking != null) o.thinkingConfig = { thinkingBudget: t.thinking };
      return new ChatGoogleGenerativeAI(o);
    }
    default:
      throw new Unsupported(["api " + t.api]);
  }
}

function toolsOf(t) {
  const form = t.options?.tools ?? "tool";
  return t.tools.map((x) => {
    if (form === "dict") {
      const f = { name: x.name, parameters: x.parameters };
      if (x.description != null) f.description = x.description;
      return { type: "function", function: f };
    }
    // The tool is never run here: the caller runs tools (tooltape sends the results).
    return tool(async () => "", { name: x.name, description: x.description ?? undefined, schema: x.parameters });
  });
}

function bindOptions(t) {
  const o = {};
  const c = t.tool_choice;
  if (c === "required") o.tool_choice = "any";
  else if (typeof c === "string") o.tool_choice = c;
  else if (c && "name" in c) o.tool_choice = c.name;
  else if (c) throw new Unsupported(["tool_choice allowed"]);
  // ChatOpenAI's bindTools takes these; the other providers' take neither.
  if (t.parallel_tool_calls != null) {
    if (!OPENAI.has(t.api)) throw new Unsupported(["parallel_tool_calls"]);
    o.parallel_tool_calls = t.parallel_tool_calls;
  }
  if (t.strict) {
    if (!OPENAI.has(t.api)) throw new Unsupported(["strict"]);
    o.strict = true;
  }
  return o;
}

function messagesOf(messages) {
  return messages.map((m) => {
    if (m.role === "system") return new SystemMessage(m.content ?? "");
    if (m.role === "assistant")
      return new AIMessage({
        content: m.content ?? "",
        tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, args: argsObject(c.arguments), type: "tool_call" })),
      });
    if (m.role === "tool") return toolMessage(m);
    return new HumanMessage(m.content ?? "");
  });
}

/** A tool result's content: its parts as standard content blocks when given as parts. */
function toolContent(m) {
  if (!m.parts?.length) return m.content ?? "";
  return convertParts(m.parts, {
    text: (text) => ({ type: "text", text }),
    image: (mimeType, data) => ({ type: "image", data, mimeType }),
    image_url: (url) => ({ type: "image", url }),
  });
}

const toolMessage = (m) =>
  m.langchain_message ??
  new ToolMessage({ content: toolContent(m), tool_call_id: m.call_id, name: m.name, status: m.is_error ? "error" : "success" });

// The messages a caller keeps for one trial. A round whose `messages` extend the last round's (the
// same trial, its assistant turn and tool results appended) is a follow-up; anything else starts a
// new conversation.
const kept = { name: null, seen: [], input: [] };

function conversation(t, messages) {
  const n = kept.seen.length;
  if (t.name === kept.name && messages.length > n && JSON.stringify(messages.slice(0, n)) === JSON.stringify(kept.seen)) {
    // The loop's neutral copy of the model's turn is skipped: the AIMessage itself is in `input`
    // already. Then the tool results.
    kept.input.push(...messages.slice(n).filter((m) => m.role === "tool").map(toolMessage));
  } else Object.assign(kept, { name: t.name, input: messagesOf(messages) });
  kept.seen = [...messages];
  return kept.input;
}

function finishOf(meta) {
  for (const k of ["finish_reason", "stop_reason", "finishReason", "status"]) if (meta?.[k] != null) return String(meta[k]);
  return null;
}

function resultOf(msg) {
  const u = msg.usage_metadata;
  const id = msg.response_metadata?.id;
  return {
    response_id: typeof id === "string" && id.startsWith("resp_") ? id : undefined,
    calls: (msg.tool_calls ?? []).map((c) => ({ id: c.id ?? null, name: c.name, arguments: c.args })),
    text: msg.text || null,
    finish: finishOf(msg.response_metadata),
    usage: u ? { input_tokens: u.input_tokens ?? null, output_tokens: u.output_tokens ?? null } : null,
  };
}

function chunkOf(chunk) {
  const doc = {};
  if (chunk.text) doc.text = chunk.text;
  const calls = (chunk.tool_call_chunks ?? []).map((c) => {
    const call = {};
    if (c.index != null) call.index = c.index;
    if (c.id) call.id = c.id;
    if (c.name) call.name = c.name;
    if (c.args != null) call.arguments = c.args;
    return call;
  });
  if (calls.length) doc.calls = calls;
  const finish = finishOf(chunk.response_metadata);
  if (finish) doc.finish = finish;
  return Object.keys(doc).length ? doc : null;
}

async function call(t, messages) {
  let model = modelOf(t);
  // Tools through the MCP adapters: the trial's session, each result a ToolNode's ToolMessage.
  const session = t.mcp ? await mcpState(t, messages, openMcp) : null;
  if (session) {
    messages = await mcpAnswered(t, messages, session, "langchain_message", (c) => mcpMessage(session, c));
    model = model.bindTools(session.tools, bindOptions(t));
  } else if (t.tools.length) model = model.bindTools(toolsOf(t), bindOptions(t));
  else if (t.tool_choice != null || t.parallel_tool_calls != null) bindOptions(t);
  const input = conversation(t, messages);
  // Continued by previous_response_id: only what follows the last answer, whose id goes as the
  // call option; the earlier context is the server's.
  let sent = input;
  const options = {};
  if (t.continue_with === "previous_response_id") {
    const last = input.findLastIndex((m) => m._getType() === "ai");
    const id = last >= 0 ? input[last].response_metadata?.id : null;
    if (id) {
      sent = input.slice(last + 1);
      options.previous_response_id = id;
    }
  }
  if (!t.stream) {
    const msg = await model.invoke(sent, options);
    input.push(msg);
    return resultOf(msg);
  }
  const chunks = [];
  let final = null;
  for await (const chunk of await model.stream(sent, options)) {
    const doc = chunkOf(chunk);
    if (doc) chunks.push(doc);
    final = final === null ? chunk : final.concat(chunk);
  }
  if (final === null) throw new Error("the stream yielded no chunk");
  input.push(final);
  return { ...resultOf(final), chunks };
}

// ---- Tools through LangChain's MCP adapters (`mcp`) ----
//
// @langchain/mcp-adapters 1.1.4 (with its required peer @langchain/langgraph 1.7.3 and
// @modelcontextprotocol/sdk 1.32.2), as its README and LangChain's MCP docs
// (https://docs.langchain.com/oss/javascript/langchain/mcp) show it: `new MultiServerMCPClient({
// mcpServers: {NAME: {transport: "http", url}}})`, `await client.getTools()`, the tools bound to the
// chat model (`bindTools`, the trial's tool_choice, parallel switch and strict as for any tools),
// `client.close()` at the end; the client's defaults otherwise (`useStandardContentBlocks: false`,
// `outputHandling` default). Once per trial, on its first round, kept for its next rounds. What
// the adapters make of the server's tools and answers (dist/tools.js):
// - `loadMcpTools`: each tool a DynamicStructuredTool, `description` the server's or "",
//   `schema` the inputSchema with `properties` defaulted to {}, `$ref`s to `$defs` /
//   `definitions` inlined (dereferenceJsonSchema), then simplifyJsonSchemaForLLM: `allOf`
//   merged, `anyOf` / `oneOf` flattened to their object variants' properties, `if`/`then`/`else`
//   turned into properties, `not`, `$schema` and `unevaluatedProperties` dropped (recursively);
//   `responseFormat: "content_and_artifact"`;
// - `_callTool` / `_convertCallToolResult`: one `tools/call`; a result with `isError` throws a
//   ToolException (its text parts joined); text parts as `{type: "text", text}` (one text part
//   alone: the string), images as `image_url` data URLs, audio as `audio` blocks, `resource_link`
//   as a `file` url block, embedded resources to the artifact (not the model);
//   `structuredContent` and `_meta` go to the artifact, and onto the one text block when the
//   text is alone.
// Each call a `results` line answers runs through LangGraph's prebuilt ToolNode (the adapters'
// README: the tools "can be used anywhere LangChain tools are used, including with LangGraph
// prebuilt agents"), one call at a time in the results' order (`toolNode.invoke([AIMessage with
// that call])`): the ToolMessage it returns is what goes back, its default `handleToolErrors`
// making a thrown error (the isError ToolException) `status: "error"` with content
// `Error: <message>\n Please fix your mistakes.` (@langchain/langgraph dist/prebuilt/tool_node.js
// `runTool`). tooltape's written content is for the log only.

/** The trial's MCP state (the shared loop's `mcpState`): the adapters' client, its tools and the
 * ToolNode that runs them. */
async function openMcp(t) {
  const client = new MultiServerMCPClient({ mcpServers: { tooltape: { transport: "http", url: t.mcp.url } } });
  try {
    const tools = await client.getTools();
    return { client, tools, node: new ToolNode(tools), close: () => client.close() };
  } catch (e) {
    await client.close().catch(() => {});
    throw e;
  }
}

/** The ToolMessage the state's ToolNode makes running call `c` alone. */
async function mcpMessage(s, c) {
  const turn = new AIMessage({ content: "", tool_calls: [{ id: c.id, name: c.name, args: argsObject(c.arguments), type: "tool_call" }] });
  const [answer] = await s.node.invoke([turn]);
  return answer;
}

// Why each entry this driver answers `unsupported` for is not expressible through LangChain.js
// (@langchain/core 1.4.0, @langchain/openai 1.5.8, @langchain/anthropic 1.5.11,
// @langchain/google-genai 2.3.2, their installed dist/*.d.ts), by bindTools and the chat models.
const UNSUPPORTED = {
  allowed_callers:
    "@langchain/anthropic (langchain-js 1.5.8's) dist/utils/tools.js: a tool's allowed_callers passed through to Anthropic; DRIVER GAP, not a library limit: this driver does not yet pass a tool's callers, the runner or a call's caller and container back (class 30)",
  thinking:
    "DRIVER GAP, arguably: @langchain/openai 1.5.8 ChatOpenAI documents `reasoning: {effort}`, a level and not the trial's token budget; the other drivers ask effort 'low' for thinking, this one does not yet on the OpenAI routes",
  hosted:
    "DRIVER GAP, not a library limit: no portable spelling, but each integration documents its server tools (@langchain/openai dist/tools/: webSearch, toolSearch, ...; @langchain/anthropic dist/tools/: webSearch, toolSearch, ...); this driver does not pass them yet",
  caller_tools: "DRIVER GAP, not a library limit: @langchain/openai 1.5.8 dist/tools/custom.d.ts customTool is the OpenAI custom tool; this driver does not bind one yet",
  compaction:
    "DRIVER GAP, not a library limit: @langchain/anthropic 1.5.11 dist/chat_models.d.ts ChatAnthropic contextManagement documents Anthropic's context management; @langchain/openai 1.5.8's ChatOpenAI types have no context_management, @langchain/google-genai none; this driver does not pass it yet",
  eager_input_streaming:
    "DRIVER GAP, not verified either way: @langchain/core 1.4.0 dist/tools/index.d.ts tool fields `extras` ('provider-specific' fields); whether @langchain/anthropic 1.5.11 sends eager_input_streaming from them was not audited, and this driver does not pass extras yet",
  defer_loading:
    "DRIVER GAP, not a library limit: @langchain/anthropic 1.5.11 dist/tools/toolSearch.d.ts and @langchain/openai 1.5.8 dist/tools/toolSearch.d.ts document the tool searches with deferred tools (defer_loading); this driver does not pass them yet",
  namespace: "@langchain/openai 1.5.8: no namespace for a bound tool in its types (dist/chat_models/*.d.ts, dist/tools/); a namespace is an OpenAI Responses tool group",
  "tool_choice allowed": "@langchain/core 1.4.0 dist/language_models/chat_models.d.ts ToolChoice: a tool's name, 'auto', 'any' (or a provider's own record); no portable allowed-tools subset",
  parallel_tool_calls:
    "@langchain/anthropic 1.5.11 dist/chat_models.d.ts ChatAnthropicCallOptions and @langchain/google-genai 2.3.2 call options: no parallel_tool_calls (ChatOpenAI's bindTools takes it)",
  strict:
    "@langchain/google-genai 2.3.2: no strict in its call options; on the Anthropic route a DRIVER GAP: @langchain/anthropic 1.5.11 dist/chat_models.d.ts ChatAnthropicCallOptions.strict exists and this driver does not pass it yet",
  api: "this driver's routes are OpenAI Chat and Responses, Anthropic and Gemini (clients/langchain-js.toml), each through its LangChain.js integration",
};

await serve(call, { supports: ["mcp", "thinking", "result_parts", "continue_with", "round_routes"], unsupported: UNSUPPORTED });
await mcpClose();
