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
import { createInterface } from "node:readline";

/** The library cannot express these trial fields (not a failure: "not expressible"). */
export class Unsupported extends Error {
  constructor(fields) {
    super(fields.join(", "));
    this.fields = fields;
  }
}

/** A thrown error as the result's `error`: `{type, message, status?}`. */
export function errorOf(e) {
  const doc = { type: e?.name ?? "Error", message: String(e?.message ?? e).slice(0, 2000) };
  if (Number.isInteger(e?.statusCode)) doc.status = e.statusCode;
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
// one the driver does not handle is answered `unsupported` without calling the library.
export const OPTIONAL_FEATURES = ["thinking"];

export async function serve(call, { supports = [] } = {}) {
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
      for (;;) {
        let result;
        try {
          const unhandled = OPTIONAL_FEATURES.filter((k) => trial[k] != null && !supports.includes(k));
          if (unhandled.length) throw new Unsupported(unhandled);
          result = await call(trial, messages);
        } catch (e) {
          result = e instanceof Unsupported ? { unsupported: e.fields } : { error: errorOf(e) };
        }
        write(JSON.stringify({ result }) + "\n");
        const after = await next();
        if (after === null) return;
        const doc = object(after, "the line after a result");
        if (Array.isArray(doc.results)) {
          // The follow-up's tool_choice (absent: leave it out).
          trial = { ...trial, tool_choice: doc.tool_choice ?? null };
          const turn = { role: "assistant", content: result?.text ?? null, tool_calls: result?.calls ?? [] };
          // The reasoning state the library handed over, for the next round.
          if (result?.reasoning?.length) turn.reasoning = result.reasoning;
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
