// tooltape driver for the official Google Gen AI JavaScript SDK (`@google/genai` on npm):
// models.generateContent, buffered and streamed (generateContentStream; the SDK hands over whole
// parts per chunk and no accumulated response, so the result is the chunks' calls, text, last
// finish and usage gathered as a caller would). Tools are function declarations with
// `parametersJsonSchema` (the JSON Schema as written); plain declarations are never called
// automatically. Across rounds the driver keeps the `contents` array a caller keeps: the trial's
// conversation as the caller wrote it, then the model's turn as the SDK handed it over
// (`response.candidates[0].content`, its parts with their `thoughtSignature`s, pushed as is, as the
// SDK's docs on function calling and thought signatures tell a caller to), then a user turn of
// function response parts. Streamed, each chunk's `candidates[0].content` is pushed in order, as
// the SDK's own chat session records a streamed answer (`Chat.sendMessageStream`). Thinking is
// `thinkingConfig.thinkingBudget`. Tool results given as parts (`result_parts`): the text in
// `response`, each image a function response part (`inlineData`, a URL as `fileData`), as the SDK's
// docs on multimodal function responses show. Hosted web search (`hosted`) is a `{googleSearch: {}}`
// tool beside the function declarations; REQUIRED grounding is not expressible (the Gemini API has
// no way to force the search). The package is imported from the install folder
// ($TOOLTAPE_CLIENT_DIR); the protocol loop is clients/node/tooltape_driver.mjs.
import { argumentsObject as argsObject, convertParts, importInstalled, serve, Unsupported } from "../node/tooltape_driver.mjs";

const { GoogleGenAI } = await importInstalled("@google/genai");

// A tool result as the function response: a JSON object as is, else under `result` (`error`).
function responseObject(content, isError) {
  if (isError) return { error: content };
  try {
    const v = JSON.parse(content);
    if (v && typeof v === "object" && !Array.isArray(v)) return v;
  } catch {
    // not JSON: the text itself
  }
  return { result: content };
}

/** A tool result as a function response part: its text in `response`, its images (given as
 * parts) as the response's own parts. */
function functionResponse(m) {
  const media = convertParts(m.parts ?? [], {
    // The text is the response's own (`content`, the parts' text joined).
    text: () => null,
    image: (mimeType, data) => ({ inlineData: { mimeType, data } }),
    image_url: (fileUri) => ({ fileData: { fileUri } }),
  }).filter((p) => p !== null);
  const fr = { name: m.name, response: responseObject(m.content ?? "", m.is_error) };
  if (media.length) fr.parts = media;
  return { functionResponse: fr };
}

function contentsOf(messages) {
  const system = [];
  const out = [];
  for (const m of messages) {
    if (m.role === "system") system.push(m.content ?? "");
    else if (m.role === "assistant") {
      const parts = [];
      if (m.content) parts.push({ text: m.content });
      for (const c of m.tool_calls ?? []) parts.push({ functionCall: { name: c.name, args: argsObject(c.arguments) } });
      out.push({ role: "model", parts });
    } else if (m.role === "tool") {
      const part = functionResponse(m);
      const last = out[out.length - 1];
      if (last?.role === "user" && last.parts[0]?.functionResponse) last.parts.push(part);
      else out.push({ role: "user", parts: [part] });
    } else out.push({ role: "user", parts: [{ text: m.content ?? "" }] });
  }
  return { system: system.join("\n\n"), contents: out };
}

// The caller's turn after the model's calls: one user turn of function response parts.
const resultsContent = (messages) => ({
  role: "user",
  parts: messages.filter((m) => m.role === "tool").map(functionResponse),
});

// The contents a caller keeps for one trial. A round whose `messages` extend the last round's (the
// same trial, its assistant turn and tool results appended) is a follow-up; anything else starts a
// new conversation.
const kept = { name: null, seen: [], system: "", contents: [] };

function conversation(t, messages) {
  const n = kept.seen.length;
  if (t.name === kept.name && messages.length > n && JSON.stringify(messages.slice(0, n)) === JSON.stringify(kept.seen)) {
    // The loop's neutral copy of the model's turn is skipped: the model's own turn is in
    // `contents` already. Then the tool results.
    kept.contents.push(resultsContent(messages.slice(n)));
  } else {
    const { system, contents } = contentsOf(messages);
    Object.assign(kept, { name: t.name, system, contents });
  }
  kept.seen = [...messages];
  return kept;
}

function configOf(t, system) {
  const config = {};
  if (system) config.systemInstruction = system;
  if (t.tools.length) {
    const functionDeclarations = t.tools.map((x) => {
      const d = { name: x.name, parametersJsonSchema: x.parameters };
      if (x.description != null) d.description = x.description;
      return d;
    });
    config.tools = [{ functionDeclarations }];
  }
  for (const h of t.hosted ?? []) {
    // The Gemini API cannot force the search (no tool_choice names a hosted tool).
    if (h.type !== "web_search" || h.grounding === "required") throw new Unsupported([`hosted ${h.type} ${h.grounding}`]);
    (config.tools ??= []).push({ googleSearch: {} });
  }
  const c = t.tool_choice;
  let fc = null;
  if (c === "auto") fc = { mode: "AUTO" };
  else if (c === "none") fc = { mode: "NONE" };
  else if (c === "required") fc = { mode: "ANY" };
  else if (c && "name" in c) fc = { mode: "ANY", allowedFunctionNames: [c.name] };
  // allowedFunctionNames only counts with ANY or VALIDATED (the API's documented rule).
  else if (c) fc = { mode: c.mode === "required" ? "ANY" : "VALIDATED", allowedFunctionNames: [...c.allowed] };
  if (fc) config.toolConfig = { functionCallingConfig: fc };
  // The Gemini API has no parallel switch: `parallel_tool_calls` has nothing to become.
  if (t.max_tokens != null) config.maxOutputTokens = t.max_tokens;
  if (t.thinking != null) config.thinkingConfig = { thinkingBudget: t.thinking };
  return config;
}

const partsOf = (r) => r.candidates?.[0]?.content?.parts ?? [];
const callsOf = (parts) =>
  parts.filter((p) => p.functionCall).map((p) => ({ id: p.functionCall.id ?? null, name: p.functionCall.name, arguments: p.functionCall.args ?? {} }));
const textOf = (parts) => parts.filter((p) => p.text && !p.thought).map((p) => p.text).join("");
const finishOf = (r) => r.candidates?.[0]?.finishReason ?? null;
const usageOf = (r) =>
  r.usageMetadata ? { input_tokens: r.usageMetadata.promptTokenCount ?? null, output_tokens: r.usageMetadata.candidatesTokenCount ?? null } : null;

async function call(t, messages) {
  if (t.api !== "gemini") throw new Unsupported(["api " + t.api]);
  const { system, contents } = conversation(t, messages);
  const ai = new GoogleGenAI({ apiKey: t.api_key, httpOptions: { baseUrl: t.base_url, apiVersion: "v1beta" } });
  const p = { model: t.model, contents, config: configOf(t, system) };
  if (!t.stream) {
    const r = await ai.models.generateContent(p);
    if (r.candidates?.[0]?.content) contents.push(r.candidates[0].content);
    const parts = partsOf(r);
    return { calls: callsOf(parts), text: textOf(parts) || null, finish: finishOf(r), usage: usageOf(r) };
  }
  const chunks = [];
  const calls = [];
  let text = "";
  let finish = null;
  let usage = null;
  const answer = [];
  for await (const r of await ai.models.generateContentStream(p)) {
    if (r.candidates?.[0]?.content) answer.push(r.candidates[0].content);
    const parts = partsOf(r);
    const doc = {};
    if (textOf(parts)) text += doc.text = textOf(parts);
    if (callsOf(parts).length) calls.push(...(doc.calls = callsOf(parts)));
    if (finishOf(r)) finish = doc.finish = finishOf(r);
    if (r.usageMetadata) usage = usageOf(r);
    chunks.push(doc);
  }
  contents.push(...answer);
  return { calls, text: text || null, finish, usage, chunks };
}

// Why each entry this driver answers `unsupported` for is not expressible through @google/genai
// 2.32.0 (its installed dist/genai.d.ts; the package speaks the Gemini API only, `ai.models`).
const UNSUPPORTED = {
  allowed_callers:
    "@google/genai 2.32.0 FunctionDeclaration: name, description, parameters, behavior; no callers (Gemini has no programmatic tool calling; class 30)",
  continue_with:
    "@google/genai 2.32.0 dist/genai.d.ts Models.generateContent: a Gemini generateContent call takes the whole `contents`; previous_response_id is OpenAI Responses' (the package's previous_interaction_id is the separate Interactions API, not this route)",
  caller_tools: "@google/genai 2.32.0 dist/genai.d.ts Tool: functionDeclarations and Google's own tools only; no OpenAI custom (freeform/grammar) tool",
  round_routes: "@google/genai 2.32.0 dist/genai.d.ts GoogleGenAI: one provider's client (the Gemini API / Vertex AI), no other provider to continue on",
  compaction: "@google/genai 2.32.0 dist/genai.d.ts GenerateContentConfig: no context-management or compaction field (no 'compaction' anywhere in the package)",
  eager_input_streaming: "@google/genai 2.32.0 dist/genai.d.ts FunctionDeclaration: no eager_input_streaming (an Anthropic tool field; the package has no Anthropic route)",
  defer_loading: "@google/genai 2.32.0 dist/genai.d.ts FunctionDeclaration and Tool: no defer_loading and no tool search (no 'defer_loading' or 'tool_search' anywhere in the package)",
  namespace: "@google/genai 2.32.0 dist/genai.d.ts FunctionDeclaration: name, description, parameters; no namespace (an OpenAI Responses tool group)",
  result_parts: "@google/genai 2.32.0 dist/genai.d.ts FunctionResponsePart: inlineData and fileData only (images, files); a part of another kind has no form",
  hosted:
    "@google/genai 2.32.0 dist/genai.d.ts Tool: googleSearch is the one hosted search (no tool search); FunctionCallingConfig.allowedFunctionNames names function declarations only, so no toolConfig forces the search (REQUIRED grounding)",
  api: "this driver's routes are the Gemini API only (clients/google-genai-js.toml); @google/genai 2.32.0 speaks no other wire format",
};

await serve(call, { supports: ["thinking", "result_parts", "hosted"], unsupported: UNSUPPORTED });
