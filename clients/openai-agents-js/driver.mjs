// tooltape driver for the OpenAI Agents SDK for JavaScript (`@openai/agents`): its
// OpenAIChatCompletionsModel and OpenAIResponsesModel over one `OpenAI` client, called through
// the SDK's `Model` interface (`getResponse`, `getStreamedResponse`: what the Runner calls each
// turn; no agent loop, so tooltape sends the tool results). The same code for both models: input
// as the SDK's protocol items, tools as serialized function tools with a JSON Schema (strict's
// dialect when strict, as the SDK requires of a strict JSON-Schema tool), tool_choice, the
// parallel switch and maxTokens as ModelSettings. Streamed: the raw model events are the chunks;
// the result is the `response_done` event's output, as the Runner builds its ModelResponse.
// Tracing is off (setTracingDisabled); each call runs inside `withTrace`, as the Runner's turns do. The packages are imported from the install folder
// ($TOOLTAPE_CLIENT_DIR); the protocol loop is clients/node/tooltape_driver.mjs.
import { createRequire } from "node:module";
import { join } from "node:path";

import { argumentsText as argsText, chatChunk, responsesEvent, serve, Unsupported } from "../node/tooltape_driver.mjs";

const req = createRequire(join(process.env.TOOLTAPE_CLIENT_DIR, "package.json"));
const { default: OpenAI } = req("openai");
const { OpenAIChatCompletionsModel, OpenAIResponsesModel, setTracingDisabled, withTrace } = req("@openai/agents");

setTracingDisabled(true);


function modelOf(t, client) {
  if (t.api === "openai-chat") return new OpenAIChatCompletionsModel(client, t.model);
  if (t.api === "openai-responses") return new OpenAIResponsesModel(client, t.model);
  throw new Unsupported(["api " + t.api]);
}

function inputOf(messages) {
  const items = [];
  const system = [];
  for (const m of messages) {
    if (m.role === "system") system.push(m.content ?? "");
    else if (m.role === "assistant") {
      if (m.content) items.push({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: m.content }] });
      for (const c of m.tool_calls ?? [])
        items.push({ type: "function_call", callId: c.id, name: c.name, arguments: argsText(c.arguments), status: "completed" });
    } else if (m.role === "tool")
      items.push({ type: "function_call_result", callId: m.call_id, name: m.name, status: "completed", output: { type: "text", text: m.content ?? "" } });
    else items.push({ type: "message", role: "user", content: m.content ?? "" });
  }
  return { items, system: system.join("\n\n") };
}

function settingsOf(t) {
  const s = {};
  const c = t.tool_choice;
  if (c && typeof c === "object" && "name" in c) s.toolChoice = c.name;
  else if (c && typeof c === "object") throw new Unsupported(["tool_choice allowed"]);
  else if (c != null) s.toolChoice = c;
  if (t.parallel_tool_calls != null) s.parallelToolCalls = t.parallel_tool_calls;
  if (t.max_tokens != null) s.maxTokens = t.max_tokens;
  return s;
}

const toolsOf = (t) =>
  t.tools.map((x) => ({
    type: "function",
    name: x.name,
    description: x.description ?? "",
    parameters: t.strict && x.strict_parameters != null ? x.strict_parameters : x.parameters,
    strict: Boolean(t.strict),
  }));

function resultOf(response) {
  const output = response.output ?? [];
  const parts = output.filter((i) => i.type === "message").flatMap((i) => i.content ?? []);
  const text = parts.filter((p) => p.type === "output_text").map((p) => p.text ?? "").join("");
  const refusal = parts.filter((p) => p.type === "refusal").map((p) => p.refusal ?? "").join("");
  const u = response.usage;
  return {
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
  const { items, system } = inputOf(messages);
  const request = {
    input: items,
    modelSettings: settingsOf(t),
    tools: toolsOf(t),
    outputType: "text",
    handoffs: [],
    tracing: false,
  };
  if (system) request.systemInstructions = system;
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

await serve(call);
