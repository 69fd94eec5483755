// The driver protocol's loop for Node.js drivers (docs/clients/README.md), no dependencies; the
// twin of clients/python/tooltape_driver.py, held to the same behaviour by tests/it/driver_loops.rs.
//
// A driver calls `await serve(call)`. `call(trial, messages)` (async) makes one call through the
// library, the way its documentation tells users to, and returns the result document: `calls`,
// `text`, `finish`, `usage`, `chunks` (streamed), `reasoning` (the reasoning state to send back,
// in the API's own form), or throws `Unsupported([...])` for trial fields the library has no knob
// for. Anything else it throws becomes the result's `error`. `messages`
// is the conversation so far: the trial's, then for each follow-up round the assistant turn as
// the library handed it over and the tool results tooltape sent.
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

/**
 * The library cannot express these trial fields (not a failure: "not expressible").
 *
 * "Not expressible" is a claim about the library, so each entry carries its citation: the
 * library's documentation or source at the pinned version (a URL, or a file and symbol) and a line
 * of what it says, given here (`cite`, one for every entry) or, for the entry or the words it
 * starts with, in the driver's `serve(call, { unsupported: {...} })`. An entry cited nowhere is
 * the driver's error, not an answer (`UncitedUnsupported`). As the Python twin's.
 */
export class Unsupported extends Error {
  constructor(fields, cite = null) {
    super(fields.join(", "));
    this.fields = fields;
    this.cite = cite;
  }
}

/** The driver answers `unsupported` for an entry it cites no documentation for. */
export class UncitedUnsupported extends Error {
  constructor(message) {
    super(message);
    this.name = "UncitedUnsupported";
  }
}

/** The citation `cited` (the driver's `serve(…, { unsupported })`) gives `entry`: its own, else
 * that of the longest key the entry starts with, word for word (`api` for `api gemini`). */
export function citation(entry, cited) {
  if (Object.hasOwn(cited, entry)) return cited[entry];
  const keys = Object.keys(cited).filter((k) => entry.startsWith(k + " "));
  return keys.length ? cited[keys.reduce((a, b) => (b.length > a.length ? b : a))] : null;
}

/** The result for `Unsupported` `u`: `{unsupported: […], unsupported_why: {entry: citation}}`
 * (tooltape reads `unsupported`; `unsupported_why` is for the driver log and readers of the
 * line). An entry without a citation throws `UncitedUnsupported`. */
function unsupportedAnswer(u, cited) {
  const why = Object.fromEntries(u.fields.map((f) => [f, u.cite || citation(f, cited)]));
  const uncited = u.fields.filter((f) => !why[f]);
  if (uncited.length)
    throw new UncitedUnsupported(
      `the driver answers unsupported for ${uncited.join(", ")} without citing the library's documentation that says so (serve(call, { unsupported: {...} }))`,
    );
  for (const f of u.fields) process.stderr.write(`unsupported ${f}: ${why[f]}\n`);
  return { unsupported: u.fields, unsupported_why: why };
}

/** A thrown error as the result's `error`: `{type, message, status?}`; the HTTP status is the
 * first of `statusCode` (the Vercel AI SDK), `status` (the official SDKs), `code` that is one. */
export function errorOf(e) {
  const doc = { type: e?.name ?? "Error", message: String(e?.message ?? e).slice(0, 2000) };
  const status = [e?.statusCode, e?.status, e?.code].find((v) => Number.isInteger(v) && v >= 100 && v < 600);
  if (status !== undefined) doc.status = status;
  return doc;
}

/** Every trial has these; the others (`options`, `tool_choice`, …) may be absent. */
const REQUIRED = ["name", "api", "base_url", "api_key", "model", "stream", "messages", "tools", "strict"];

/** A line the protocol does not allow where it came: the driver stops with status 2. */
class ProtocolError extends Error {}

function object(line, what) {
  let doc;
  try {
    doc = JSON.parse(line);
  } catch (e) {
    throw new ProtocolError(`${what} is not JSON: ${e.message}`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw new ProtocolError(`${what} is not a JSON object`);
  return doc;
}

/** Serves trials from stdin until end of input; a protocol error ends the process (status 2). */
// Trial fields a driver must say it handles (`serve(call, { supports: [...] })`): a trial that sets
// one the driver does not handle is answered `unsupported` without calling the library, with the
// citation the driver gives for it (`serve(call, { unsupported: {field: citation} })`); a driver
// that neither handles a field the trial sets nor cites why its library cannot answers an error.
export const OPTIONAL_FEATURES = ["thinking", "hosted", "result_parts", "continue_with", "caller_tools", "round_routes", "compaction", "mcp"];
// A tool field a driver must say it handles the same way: a trial with a tool that sets it (true)
// is answered `unsupported`. `eager_input_streaming` (Anthropic's fine-grained tool streaming,
// class 25) is set on the `anthropic` api only; `defer_loading` (a tool declared deferred beside a
// tool search, class 28), `namespace` (a Responses namespace, class 29) and `allowed_callers` (who
// may call it: the model, or code the model wrote, class 30) on the APIs that have them.
export const OPTIONAL_TOOL_FEATURES = ["eager_input_streaming", "defer_loading", "namespace", "allowed_callers"];

/** The optional fields `trial` sets that the driver does not say it handles. */
function unhandled(trial, supports) {
  const fields = OPTIONAL_FEATURES.filter((k) => trial[k] != null && !supports.includes(k));
  const tools = trial.tools ?? [];
  return fields.concat(OPTIONAL_TOOL_FEATURES.filter((k) => !supports.includes(k) && tools.some((t) => t[k])));
}

/** `supports`: the optional trial and tool fields the driver handles; `unsupported`: `{entry:
 * citation}` for every other such field and every entry the driver's own `Unsupported` throws
 * without a `cite` (a key also covers entries starting with it and a space): where the library's
 * documentation or source, at the pinned version, says it has no knob for it, and what it says. */
export async function serve(call, { supports = [], unsupported: cited = {} } = {}) {
  // The protocol owns stdout: the library's own logging goes to stderr.
  const write = process.stdout.write.bind(process.stdout);
  console.log = console.info = console.warn = console.debug = console.error;
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]();
  const next = async () => {
    for (;;) {
      const { value, done } = await lines.next();
      if (done) return null;
      if (value.trim()) return value;
    }
  };
  try {
    for (let line = await next(); line !== null; line = await next()) {
      let trial = object(line, "a trial line");
      const missing = REQUIRED.filter((k) => !(k in trial));
      if (missing.length) throw new ProtocolError(`a trial line lacks ${missing.join(", ")}`);
      const messages = [...trial.messages];
      let rounds = 0;
      for (;;) {
        let result;
        try {
          const fields = unhandled(trial, supports);
          if (fields.length) throw new Unsupported(fields);
          result = await call(trial, messages);
        } catch (e) {
          if (!(e instanceof Unsupported)) result = { error: errorOf(e) };
          else {
            try {
              result = unsupportedAnswer(e, cited);
            } catch (u) {
              result = { error: errorOf(u) };
            }
          }
        }
        write(JSON.stringify({ result }) + "\n");
        const after = await next();
        if (after === null) return;
        const doc = object(after, "the line after a result");
        if (Array.isArray(doc.results)) {
          // The follow-up's tool_choice (absent: leave it out).
          trial = { ...trial, tool_choice: doc.tool_choice ?? null };
          // The round changes the tools in force (class 26).
          if (Array.isArray(doc.tools)) trial.tools = doc.tools;
          // The round goes on another provider (class 20): its route's api, model and options.
          const route = trial.round_routes?.[rounds++];
          if (route && typeof route === "object") trial = { ...trial, api: route.api, model: route.model, options: route.options ?? {} };
          const turn = { role: "assistant", content: result?.text ?? null, tool_calls: result?.calls ?? [] };
          // The reasoning state the library handed over, for the next round.
          if (result?.reasoning?.length) turn.reasoning = result.reasoning;
          // The answer's id, for a round continued by previous_response_id.
          if (result?.response_id) turn.response_id = result.response_id;
          messages.push(turn);
          messages.push(...doc.results);
        } else if ("done" in doc) {
          break;
        } else {
          throw new ProtocolError(`the line after a result is neither results nor done: ${after.slice(0, 200)}`);
        }
      }
    }
  } catch (e) {
    if (!(e instanceof ProtocolError)) throw e;
    process.stderr.write(`protocol error: ${e.message}\n`);
    process.exit(2);
  }
}

// ---- The library's install folder ----

/** `require` resolving from the library's install folder (`$TOOLTAPE_CLIENT_DIR`, the profile's
 * `{{dir}}`, where its node_modules are): the driver's own folder has none. */
function installRequire() {
  const dir = process.env.TOOLTAPE_CLIENT_DIR;
  if (!dir) throw new Error("TOOLTAPE_CLIENT_DIR is not set: the profile's [driver.env] names the install folder");
  return createRequire(join(dir, "package.json"));
}

/** A package of the install folder as an ES module (`await importInstalled("openai")`). */
export const importInstalled = (name) => import(pathToFileURL(installRequire().resolve(name)).href);

/** A package of the install folder as CommonJS (`require`): for packages that must share one
 * instance of a dependency with the driver (LangChain's `@langchain/core`, the Agents SDK's
 * `openai`). */
export const requireInstalled = (name) => installRequire()(name);

// ---- Shapes several drivers share (as the Python twin's readers) ----

/** The schema a caller of a pass-through library writes: strict's dialect when strict. */
export const parameters = (t, tool) => (t.strict && tool.strict_parameters != null ? tool.strict_parameters : tool.parameters);

/**
 * A tool result's parts (`result_parts`) in a library's own form, each through its kind's
 * converter: `text(text)`, `image(mediaType, base64Data)`, `image_url(url)`. A kind the library
 * has no converter for (absent) is `unsupported` (`result_parts KIND`). As the Python twin's
 * `convert_parts`.
 */
export function convertParts(parts, { text, image, image_url } = {}) {
  return parts.map((p) => {
    if (p.type === "text" && text) return text(p.text ?? "");
    if (p.type === "image" && image) return image(p.media_type, p.data);
    if (p.type === "image_url" && image_url) return image_url(p.url);
    throw new Unsupported(["result_parts " + p.type]);
  });
}

/** A call's arguments as a JSON string (libraries take either). */
export const argumentsText = (a) => (a == null ? "{}" : typeof a === "string" ? a : JSON.stringify(a));

/** A call's arguments as an object (`""` and absent: `{}`). */
export const argumentsObject = (a) => (a == null || a === "" ? {} : typeof a === "string" ? JSON.parse(a) : a);

/** One OpenAI Chat stream chunk as a protocol chunk (null when it carries nothing). */
export function chatChunk(chunk) {
  const c = chunk?.choices?.[0];
  if (!c) return null;
  const doc = {};
  if (c.delta?.content) doc.text = c.delta.content;
  const calls = (c.delta?.tool_calls ?? []).map((d) => {
    const call = {};
    if (d.index != null) call.index = d.index;
    if (d.id) call.id = d.id;
    if (d.function?.name) call.name = d.function.name;
    if (d.function?.arguments != null) call.arguments = d.function.arguments;
    return call;
  });
  if (calls.length) doc.calls = calls;
  if (c.finish_reason) doc.finish = c.finish_reason;
  return Object.keys(doc).length ? doc : null;
}

/**
 * One OpenAI Responses stream event as a protocol chunk (null when it carries no call or text).
 * `seen` (a Set, one per stream) holds the output indices whose arguments came as deltas: the
 * done event repeats them whole, so it counts only where no delta came (arguments sent in the
 * done event alone), as a caller reading the stream takes them.
 */
export function responsesEvent(ev, seen) {
  const i = ev?.output_index;
  if (ev?.type === "response.output_item.added" && ev.item?.type === "function_call")
    return { calls: [{ index: i, id: ev.item.call_id, name: ev.item.name }] };
  if (ev?.type === "response.function_call_arguments.delta") {
    seen.add(i);
    return { calls: [{ index: i, arguments: ev.delta }] };
  }
  if (ev?.type === "response.function_call_arguments.done" && !seen.has(i)) return { calls: [{ index: i, arguments: ev.arguments }] };
  if (ev?.type === "response.output_text.delta") return { text: ev.delta };
  return null;
}

/**
 * For a trial continued by `previous_response_id` (`continue_with`): the last answer's id (the
 * assistant turn's `response_id`) and the messages after that answer (the round's results), the
 * earlier context being the server's; otherwise `{previous: null, sent: messages}`.
 */
export function continued(t, messages) {
  if (t.continue_with !== "previous_response_id") return { previous: null, sent: messages };
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== "assistant") continue;
    if (messages[i].response_id) return { previous: messages[i].response_id, sent: messages.slice(i + 1) };
    break;
  }
  return { previous: null, sent: messages };
}

// ---- The protocol's `mcp` (docs/clients/README.md, "MCP routes") ----

/** The open trial's MCP state: `{key, state}`. */
let mcpOpen = null;

/**
 * The trial's MCP state: `open(t)` makes it on the trial's first round (the library's MCP client,
 * its tools; an object with `close()`), kept across the trial's rounds; a new trial (or the same
 * trial sent again) closes the one before. The state gets `answers`, each call id's result.
 */
export async function mcpState(t, messages, open) {
  const key = `${t.name} ${t.mcp.url}`;
  if (mcpOpen && mcpOpen.key === key && messages.length > t.messages.length) return mcpOpen.state;
  await mcpClose();
  const state = await open(t);
  state.answers = new Map();
  mcpOpen = { key, state };
  return state;
}

/** Closes the open trial's MCP state (a driver calls it once `serve` returns). */
export async function mcpClose() {
  const open = mcpOpen;
  mcpOpen = null;
  if (open) await open.state.close().catch((e) => process.stderr.write(`MCP client close: ${e?.message ?? e}\n`));
}

/**
 * `messages` with each tool result of a `results` line (after the trial's own messages) given
 * `[field]`: `answer(call)`, the library's result of the call it answers (the call with that id
 * in the assistant turn before it), each call answered once across the trial's rounds.
 */
export async function mcpAnswered(t, messages, state, field, answer) {
  const out = [...messages];
  let calls = [];
  for (let i = 0; i < out.length; i++) {
    const m = out[i];
    if (m.role === "assistant") calls = m.tool_calls ?? [];
    if (m.role !== "tool" || i < t.messages.length) continue;
    if (!state.answers.has(m.call_id)) {
      const c = calls.find((x) => x.id === m.call_id);
      if (!c) throw new Error(`the tool result for ${m.call_id} answers no call the library handed over`);
      state.answers.set(m.call_id, { name: c.name, value: await answer(c) });
    }
    const a = state.answers.get(m.call_id);
    out[i] = { ...m, name: a.name, [field]: a.value };
  }
  return out;
}
