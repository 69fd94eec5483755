// tooltape driver for the OpenAI Agents SDK for JavaScript (`@openai/agents`): its
// OpenAIChatCompletionsModel and OpenAIResponsesModel over one `OpenAI` client, called through
// the SDK's `Model` interface (`getResponse`, `getStreamedResponse`: what the Runner calls each
// turn; no agent loop, so tooltape sends the tool results). The same code for both models: input
// as the SDK's protocol items, tools as serialized function tools with a JSON Schema (strict's
// dialect when strict, as the SDK requires of a strict JSON-Schema tool), tool_choice, the
// parallel switch and maxTokens as ModelSettings. Streamed: the raw model events are the chunks;
// the result is the `response_done` event's output, as the Runner builds its ModelResponse.
// Tracing is off (setTracingDisabled); each call runs inside `withTrace`, as the Runner's turns do.
// Tool results given as parts (`result_parts`) are `function_call_result` items whose `output` is a
// list of `input_text` / `input_image` items (the protocol's structured tool output, the same for
// both models). A trial continued by `previous_response_id` (`continue_with`, the Responses model)
// sends only the round's results with the request's `previousResponseId` (what the Runner hands the
// model), the last answer's `responseId`. Hosted web search (`hosted`) is `webSearchTool()`
// (documented for the Responses model only: not expressible on the Chat model), REQUIRED grounding
// `toolChoice: "web_search"`. The packages are imported from the install folder
// ($TOOLTAPE_CLIENT_DIR); the protocol loop is clients/node/tooltape_driver.mjs.
//
// Thinking (`thinking`) is `modelSettings.reasoning: {effort: "low"}` (the SDK's setting for
// reasoning models, the same for both models: the Chat model sends it as `reasoning_effort`; an
// effort, not a token budget, so the budget is not carried). Across rounds, thinking on or off, the
// driver keeps the history a Runner keeps (`result.history`: the input, then each model response's
// output items as they came): the ModelResponse's `output` (reasoning items with their
// `encrypted_content` in `providerData`), handed over as the result's `reasoning`
// (`[{openai_agents: items}]`) and taking the place of the protocol's neutral copy of that turn.
import {
  argumentsText as argsText,
  chatChunk,
  continued,
  convertParts,
  mcpAnswered,
  mcpClose,
  mcpState,
  parameters,
  requireInstalled,
  responsesEvent,
  serve,
  Unsupported,
} from "../node/tooltape_driver.mjs";
import { join } from "node:path";

const { default: OpenAI } = requireInstalled("openai");
const {
  Agent,
  invokeFunctionTool,
  MCPServerStreamableHttp,
  OpenAIChatCompletionsModel,
  OpenAIResponsesModel,
  programmaticToolCallingTool,
  RunContext,
  setTracingDisabled,
  toolSearchTool,
  webSearchTool,
  withTrace,
} = requireInstalled("@openai/agents");

setTracingDisabled(true);

function modelOf(t, client) {
  if (t.api === "openai-chat") return new OpenAIChatCompletionsModel(client, t.model);
  if (t.api === "openai-responses") return new OpenAIResponsesModel(client, t.model);
  throw new Unsupported(["api " + t.api]);
}

/** A tool result's parts as a structured tool output list. */
const outputParts = (parts) =>
  convertParts(parts, {
    text: (text) => ({ type: "input_text", text }),
    image: (mediaType, data) => ({ type: "input_image", image: `data:${mediaType};base64,${data}` }),
    image_url: (url) => ({ type: "input_image", image: url }),
  });

function inputOf(messages) {
  const items = [];
  const system = [];
  for (const m of messages) {
    if (m.role === "system") system.push(m.content ?? "");
    // An assistant turn the SDK answered: its ModelResponse's output items, as they came.
    else if (m.role === "assistant" && m.reasoning?.[0]?.openai_agents) items.push(...m.reasoning[0].openai_agents);
    else if (m.role === "assistant") {
      if (m.content) items.push({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: m.content }] });
      for (const c of m.tool_calls ?? [])
        items.push({ type: "function_call", callId: c.id, name: c.name, arguments: argsText(c.arguments), status: "completed" });
    } else if (m.role === "tool" && m.openai_agents_item) items.push(m.openai_agents_item);
    else if (m.role === "tool") {
      const output = m.parts?.length ? outputParts(m.parts) : { type: "text", text: m.content ?? "" };
      items.push({ type: "function_call_result", callId: m.call_id, name: m.name, status: "completed", output });
    }
    else items.push({ type: "message", role: "user", content: m.content ?? "" });
  }
  return { items, system: system.join("\n\n") };
}

function settingsOf(t) {
  const s = {};
  let c = t.tool_choice;
  if ((t.hosted ?? []).some((h) => h.grounding === "required")) {
    if (c != null && c !== "auto") throw new Unsupported(["hosted grounding required with tool_choice"]);
    c = "web_search";
  }
  if (c && typeof c === "object" && "name" in c) s.toolChoice = c.name;
  else if (c && typeof c === "object") throw new Unsupported(["tool_choice allowed"]);
  else if (c != null) s.toolChoice = c;
  if (t.parallel_tool_calls != null) s.parallelToolCalls = t.parallel_tool_calls;
  if (t.max_tokens != null) s.maxTokens = t.max_tokens;
  if (t.thinking != null) s.reasoning = { effort: "low" };
  if (t.compaction) {
    if (t.api !== "openai-responses") throw new Unsupported(["compaction"], UNSUPPORTED["compaction on chat"]);
    // Server-side compaction, ModelSettings.contextManagement as the SDK documents it.
    s.contextManagement = [{ type: "compaction" }];
  }
  return s;
}

const hostedOf = (t) =>
  (t.hosted ?? []).map((h) => {
    // toolSearchTool: the hosted Responses search over the deferred tools.
    if (h.type === "tool_search" && h.variant === "tool_search" && t.api === "openai-responses") return toolSearchTool();
    // programmaticToolCallingTool: the Responses runner of the functions' programs (class 30).
    if (h.type === "programmatic" && h.variant === "programmatic_tool_calling" && t.api === "openai-responses")
      return programmaticToolCallingTool();
    // webSearchTool and toolSearchTool are documented for the Responses model only.
    if (h.type !== "web_search" || t.api !== "openai-responses") throw new Unsupported([`hosted ${h.type} ${h.variant}`]);
    return webSearchTool();
  });

// SerializedFunctionTool's `deferLoading` and `namespace` (Responses only); a namespace asks its
// `namespaceDescription`, which the trial does not give, so the namespace's name is its description.
const toolsOf = (t) => {
  if (t.api !== "openai-responses" && t.tools.some((x) => x.allowed_callers?.length))
    throw new Unsupported(
      ["allowed_callers"],
      "@openai/agents-core 0.14.3 dist/tool.d.ts allowedCallers: 'Responses API only'; the Chat Completions model has no field for it",
    );
  return t.tools.map((x) => ({
    type: "function",
    name: x.name,
    description: x.description ?? "",
    parameters: parameters(t, x),
    strict: Boolean(t.strict),
    ...(x.defer_loading ? { deferLoading: true } : {}),
    ...(x.namespace ? { namespace: x.namespace, namespaceDescription: x.namespace } : {}),
    // SerializedFunctionTool.allowedCallers ("direct", "programmatic"), Responses only (class 30).
    ...(x.allowed_callers?.length ? { allowedCallers: x.allowed_callers } : {}),
  }));
};

function resultOf(response) {
  const output = response.output ?? [];
  // The output items as the Runner's history keeps them, for the next round.
  const kept = { reasoning: [{ openai_agents: JSON.parse(JSON.stringify(output)) }] };
  const parts = output.filter((i) => i.type === "message").flatMap((i) => i.content ?? []);
  const text = parts.filter((p) => p.type === "output_text").map((p) => p.text ?? "").join("");
  const refusal = parts.filter((p) => p.type === "refusal").map((p) => p.refusal ?? "").join("");
  const u = response.usage;
  return {
    ...kept,
    // A ModelResponse's `responseId`; a stream's `response_done` response has `id` (what the
    // Runner reads as the streamed answer's id, runner/streamReconciliation.js).
    response_id: response.responseId ?? response.id ?? undefined,
    calls: output.filter((i) => i.type === "function_call").map((i) => ({ id: i.callId, name: i.name, arguments: i.arguments })),
    text: text || refusal || null,
    // A ModelResponse has the output items and usage (no status: no finish to report).
    finish: null,
    usage: u ? { input_tokens: u.inputTokens ?? null, output_tokens: u.outputTokens ?? null } : null,
  };
}

// A raw model event as a protocol chunk: a Chat chunk (the Chat model) or a Responses event.
const chunkOf = (ev, seen) => (Array.isArray(ev.choices) ? chatChunk(ev) : responsesEvent(ev, seen));

async function turn(t, messages) {
  const client = new OpenAI({ baseURL: t.base_url + "/v1", apiKey: t.api_key, maxRetries: 0 });
  const model = modelOf(t, client);
  // Tools through the SDK's MCP client: the trial's session, each result the Runner's own item.
  const session = t.mcp ? await mcpState(t, messages, openMcp) : null;
  if (session) messages = await mcpAnswered(t, messages, session, "openai_agents_item", (c) => mcpItem(session, c));
  const { previous, sent } = continued(t, messages);
  const { items, system } = inputOf(sent);
  const request = {
    input: items,
    modelSettings: settingsOf(t),
    tools: [...hostedOf(t), ...(session ? await mcpTools(session) : toolsOf(t))],
    outputType: "text",
    handoffs: [],
    tracing: false,
  };
  if (system) request.systemInstructions = system;
  if (previous) request.previousResponseId = previous;
  if (!t.stream) return resultOf(await model.getResponse(request));
  const chunks = [];
  const seen = new Set();
  let final = null;
  for await (const ev of model.getStreamedResponse(request)) {
    if (ev.type === "model") {
      const doc = chunkOf(ev.event, seen);
      if (doc) chunks.push(doc);
    } else if (ev.type === "response_done") final = ev.response;
  }
  // What the Runner raises for a stream without a final response.
  if (final === null) throw new Error("Model did not produce a final response!");
  return { ...resultOf(final), chunks };
}

// Inside a trace, as the Runner calls a model (the model's spans need one; tracing is off).
const call = (t, messages) => withTrace("tooltape", () => turn(t, messages));

// ---- Tools through the SDK's MCP client (`mcp`) ----
//
// As the Agents SDK's MCP guide shows (https://openai.github.io/openai-agents-js/guides/mcp/,
// "Streamable HTTP"): `new MCPServerStreamableHttp({url})`, `await server.connect()`, an `Agent`
// with `mcpServers: [server]` (its `mcpConfig.convertSchemasToStrict` set when the trial asks for
// strict), `server.close()` at the end; with @modelcontextprotocol/sdk 1.32.2, the SDK's optional
// peer that MCPServerStreamableHttp loads (agents-core 0.14.3 dist/shims/mcp-server/node.js). The
// driver calls the Model, not the Runner, so it does each turn's MCP work as the Runner does it
// (@openai/agents-core 0.14.3):
// - the tools: `agent.getMcpTools(runContext)` (agent.js: `getAllMcpTools` with the agent's
//   mcpConfig; the Runner lists them every turn, `cacheToolsList` being off by default), each a
//   FunctionTool made by mcp.js `mcpToFunctionTool`: `parameters` the server's inputSchema with
//   `type` (default "object"), `properties` (default {}), `required` (default []) and, without
//   strict, `additionalProperties: true` whatever the server said (`nonStrictSchema`); with
//   strict (or a schema saying `additionalProperties: true`) `ensureStrictJsonSchema`
//   (`additionalProperties: false`, `required` kept) and `strict: true`; `description` the
//   server's or "". Sent as the Runner serializes a function tool (utils/serialize.js
//   `serializeTool`: name, description, parameters, strict);
// - each call: `invokeFunctionTool({tool, runContext, input, details: {toolCall}})` (tool.js, what
//   runner/toolExecution.js calls), whose MCP `invoke` is one `tools/call` returning the
//   result's `content` (its one item, or the list; `structuredContent` only with the server's
//   `useStructuredContent`, off by default; `isError` not read), a thrown error becoming the tool's
//   `errorFunction` text; the output made into the `function_call_result` item by the Runner's own
//   `getToolCallOutputItem` (runner/toolExecution.js; no public export, so the driver loads that
//   module of the pinned install): structured `input_text` / `input_image` items where every
//   content item normalizes (runner/toolOutputNormalization.js), else the output as one string
//   (`toSmartString`).
const { getToolCallOutputItem } = requireInstalled(
  join(process.env.TOOLTAPE_CLIENT_DIR, "node_modules/@openai/agents-core/dist/runner/toolExecution.js"),
);

/** The trial's MCP state (the shared loop's `mcpState`): the server connection, the Agent it
 * serves, the run context, and the FunctionTools of the last listing. */
async function openMcp(t) {
  const server = new MCPServerStreamableHttp({ url: t.mcp.url });
  await server.connect();
  const agent = new Agent({ name: "tooltape", mcpServers: [server], mcpConfig: { convertSchemasToStrict: Boolean(t.strict) } });
  return { server, agent, runContext: new RunContext(), tools: [], close: () => server.close() };
}

/** This turn's MCP tools, listed as the Runner lists them, serialized as it serializes them. */
async function mcpTools(s) {
  s.tools = await s.agent.getMcpTools(s.runContext);
  return s.tools.map((x) => ({ type: "function", name: x.name, description: x.description, parameters: x.parameters, strict: x.strict }));
}

/** The Runner's `function_call_result` item for running call `c` through its MCP FunctionTool. */
async function mcpItem(s, c) {
  const tool = s.tools.find((x) => x.name === c.name);
  if (!tool) throw new Error(`the MCP server's tools have no ${JSON.stringify(c.name)} for call ${c.id}`);
  const toolCall = { type: "function_call", callId: c.id, name: c.name, arguments: argsText(c.arguments), status: "completed" };
  const output = await invokeFunctionTool({ tool, runContext: s.runContext, input: toolCall.arguments, details: { toolCall } });
  return getToolCallOutputItem(toolCall, output, { outputSchema: tool.outputSchema });
}

// Why each entry this driver answers `unsupported` for is not expressible through @openai/agents
// 0.14.3 (its installed dist/*.d.ts).
const UNSUPPORTED = {
  caller_tools:
    "@openai/agents 0.14.3 agents-core/dist/model.d.ts SerializedTool: function, computer, shell, apply_patch and hosted tools; no OpenAI custom (freeform/grammar) tool (no `type: 'custom'` tool in the package's types)",
  round_routes:
    "@openai/agents 0.14.3 agents-core/dist/model.d.ts Model: this driver calls one Model (OpenAIChatCompletionsModel or OpenAIResponsesModel) over one OpenAI client; other providers go through the AI SDK extension, not installed here (clients/openai-agents-js.toml)",
  "compaction on chat":
    "@openai/agents 0.14.3 agents-core/dist/model.d.ts ModelSettings.contextManagement: 'This setting is available on OpenAI Responses requests, including server-side compaction' (agents-openai/dist/openaiChatCompletionsModel.js does not send it)",
  eager_input_streaming: "@openai/agents 0.14.3 agents-core/dist/model.d.ts SerializedFunctionTool: no eager_input_streaming (an Anthropic tool field; the SDK's models here speak OpenAI's APIs only)",
  "hosted tool_search":
    "@openai/agents 0.14.3 agents-openai/dist/tools.d.ts toolSearchTool: OpenAI's hosted tool_search (the Responses model only); Anthropic's tool_search_tool_regex/bm25_20251119 are no SDK tool",
  hosted:
    "@openai/agents 0.14.3 agents-openai/dist/tools.d.ts webSearchTool and toolSearchTool are hosted Responses tools; agents-openai/dist/openaiChatCompletionsConverter.js: 'Hosted tools are not supported with the ChatCompletions API'",
  "hosted grounding required with tool_choice":
    "@openai/agents 0.14.3 agents-core/dist/model.d.ts ModelSettings.toolChoice: one choice; forcing the web search (toolChoice 'web_search') leaves no room for the trial's own tool_choice",
  "tool_choice allowed": "@openai/agents 0.14.3 agents-core/dist/model.d.ts ModelSettingsToolChoice: 'auto' | 'required' | 'none' | a tool name; no allowed-tools subset",
  api: "this driver's routes are OpenAI Chat and Responses (clients/openai-agents-js.toml); the SDK's OpenAI models speak no other wire format",
};

await serve(call, {
  supports: ["mcp", "thinking", "result_parts", "continue_with", "hosted", "defer_loading", "namespace", "compaction", "allowed_callers"],
  unsupported: UNSUPPORTED,
});
await mcpClose();
