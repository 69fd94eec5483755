// tooltape driver for the Vercel AI SDK (`ai` with `@ai-sdk/openai`, `/anthropic`, `/google`):
// generateText and streamText with tools that have no `execute` (the caller runs them), the
// parallel switch as each provider's option. Streamed: every fullStream part is a chunk; the
// result is what the finished stream resolves (`toolCalls`, `text`, `finishReason`, `usage`).
// The packages are imported from the install folder ($TOOLTAPE_CLIENT_DIR); the protocol loop is
// clients/node/tooltape_driver.mjs.
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { serve, Unsupported } from "../node/tooltape_driver.mjs";

const dir = process.env.TOOLTAPE_CLIENT_DIR;
const req = createRequire(join(dir, "package.json"));
const load = (name) => import(pathToFileURL(req.resolve(name)).href);
const ai = await load("ai");
const { createOpenAI } = await load("@ai-sdk/openai");
const { createAnthropic } = await load("@ai-sdk/anthropic");
const { createGoogleGenerativeAI } = await load("@ai-sdk/google");

function modelOf(t) {
  const key = t.api_key;
  switch (t.api) {
    case "openai-chat":
      return createOpenAI({ baseURL: t.base_url + "/v1", apiKey: key }).chat(t.model);
    case "openai-responses":
      return createOpenAI({ baseURL: t.base_url + "/v1", apiKey: key }).responses(t.model);
    case "anthropic":
      return createAnthropic({ baseURL: t.base_url + "/v1", apiKey: key })(t.model);
    case "gemini":
      return createGoogleGenerativeAI({ baseURL: t.base_url + "/v1beta", apiKey: key })(t.model);
    default:
      throw new Unsupported(["api " + t.api]);
  }
}

const args = (a) => (a === undefined || a === null || a === "" ? {} : typeof a === "string" ? JSON.parse(a) : a);

function messagesOf(messages) {
  const names = {};
  return messages.map((m) => {
    if (m.role === "system") return { role: "system", content: m.content ?? "" };
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
      const output = m.is_error ? { type: "error-text", value: m.content ?? "" } : { type: "text", value: m.content ?? "" };
      return {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: m.call_id, toolName: m.name ?? names[m.call_id], output }],
      };
    }
    return { role: "user", content: m.content ?? "" };
  });
}

function optionsOf(t) {
  const o = { model: modelOf(t), maxRetries: 0 };
  if (t.tools.length) {
    o.tools = {};
    for (const x of t.tools) {
      const def = { inputSchema: ai.jsonSchema(x.parameters) };
      if (x.description != null) def.description = x.description;
      if (t.strict) def.strict = true;
      o.tools[x.name] = ai.tool(def);
    }
  }
  const c = t.tool_choice;
  if (c && typeof c === "object" && "allowed" in c) throw new Unsupported(["tool_choice allowed"]);
  if (c && typeof c === "object") o.toolChoice = { type: "tool", toolName: c.name };
  else if (c != null) o.toolChoice = c;
  // The AI SDK has no portable parallel switch; its docs give each provider's `providerOptions`
  // as the way to say it (the driver rule's one exception, docs/clients/README.md).
  if (t.parallel_tool_calls != null) {
    if (t.api === "openai-chat" || t.api === "openai-responses") o.providerOptions = { openai: { parallelToolCalls: t.parallel_tool_calls } };
    else if (t.api === "anthropic") o.providerOptions = { anthropic: { disableParallelToolUse: !t.parallel_tool_calls } };
    // Gemini has no parallel switch: nothing to send.
  }
  if (t.max_tokens != null) o.maxOutputTokens = t.max_tokens;
  return o;
}

const callsOf = (calls) => (calls ?? []).map((c) => ({ id: c.toolCallId, name: c.toolName, arguments: c.input }));
const usageOf = (u) => (u ? { input_tokens: u.inputTokens ?? null, output_tokens: u.outputTokens ?? null } : null);

async function call(t, messages) {
  // System text goes in `system` (the SDK refuses system messages in `messages`).
  const system = messages.filter((m) => m.role === "system").map((m) => m.content ?? "");
  const o = { ...optionsOf(t), messages: messagesOf(messages.filter((m) => m.role !== "system")) };
  if (system.length) o.system = system.join("\n\n");
  if (!t.stream) {
    const r = await ai.generateText(o);
    return { calls: callsOf(r.toolCalls), text: r.text || null, finish: r.finishReason ?? null, usage: usageOf(r.usage) };
  }
  let failure = null;
  const r = ai.streamText({ ...o, onError: ({ error }) => (failure = error) });
  const chunks = [];
  for await (const p of r.fullStream) {
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
    chunks,
  };
}

await serve(call, { supports: ["round_routes"] });
