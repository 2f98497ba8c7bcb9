#!/usr/bin/env node
/**
 * memcert stdio protocol adapter for JavaScript/TypeScript memory-tool handlers (Node 20+, ESM).
 *
 * Runs one handler written for `@anthropic-ai/sdk` behind memcert's stdio protocol (docs/protocol.md,
 * version 1, plus the v1.1 `batch` op), calling it exactly as the SDK's `client.beta.messages.toolRunner`
 * does and rendering its results and thrown errors as the runner puts them on the wire.
 *
 * Usage:
 *
 *     node memcert_adapter.mjs --handler SPEC [--node-path DIR]... [--init JSON]
 *
 * SPEC is `path/to/module.mjs:exportName` (relative to the current directory, or absolute) or
 * `package/subpath:exportName`, for example
 * `@anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool`. A bare specifier is resolved the
 * way `import` resolves it (the package's `exports` with the `node` and `import` conditions) from the
 * node_modules chain of the current directory, then of each `--node-path DIR`.
 *
 * The export is either
 *
 * - a class, such as the SDK's `BetaLocalFilesystemMemoryTool`: each `reset` builds a fresh instance with
 *   `await Class.init(base_dir)` when the class has a static `init`, else `new Class(base_dir)`; or
 * - a factory function `makeHandler(base_dir)` returning, or resolving to, a handler.
 *
 * `--init JSON` replaces the one argument `base_dir` of that call: a JSON array is the argument list, any
 * other JSON value the one argument, and in its strings (nested ones too) `{base}` stands for the case's
 * `base_dir` and `{store}` for its `memories_dir`: `--init '[{"root": "{store}"}]'` builds
 * `new Class({root: memories_dir})`, `--init '["{store}", "alice"]'` builds `new Class(memories_dir, "alice")`.
 *
 * `hello` names the runtime: `"sdk"` is `"@anthropic-ai/sdk <version>"` (null when the copies below are
 * used) and `"runtime"` the interpreter (`"Node v20.11.1"`).
 *
 * A handler that has a `run` method is used as the runnable tool itself (for example what
 * `betaMemoryTool(...)` returns); any other object is a handlers object (methods `view`, `create`,
 * `str_replace`, `insert`, `delete`, `rename`) and is wrapped with the SDK's `betaMemoryTool(handlers)`,
 * the tool object an application hands to the runner. The SDK's classes keep their files in
 * `base_dir/memories`, which is memcert's `memories_dir`.
 *
 * Calls go through the SDK's own `runRunnableTool` (lib/tools/BetaRunnableTool), as the runner does:
 * `tool.parse(input)` (the identity for the memory tool), `await tool.run(input, context)`; the returned
 * value is the content with `is_error: false`; a thrown `ToolError` gives its `content`, anything else
 * `Error: ` + its message (or `String(value)` for a non-Error), with `is_error: true`. The content is then
 * passed through `JSON.stringify` as the SDK's request encoder does, so what memcert sees is what the API
 * would receive: `undefined` (no key on the wire) and `null` both become `null`, an object's `toJSON` is
 * applied. A result that is then neither a string, a list of content blocks nor null is answered with
 * `ok: false` (the API would reject the request and end the run). Lone surrogates become U+FFFD.
 *
 * `batch` runs its calls concurrently with `Promise.all`, each started synchronously in order, as the
 * runner runs the `tool_use` blocks of one assistant turn; its answer lists the results in call order.
 *
 * The SDK used for `betaMemoryTool`, `runRunnableTool` and `ToolError` is the copy found first from the
 * handler module's own directory (the copy its `import`s see), then the current directory, then each
 * `--node-path`. Without one, faithful copies of those helpers (as in @anthropic-ai/sdk 1.14.0) are used
 * and `hello` reports `"sdk": null`.
 *
 * Guarantees:
 *
 * - The protocol is read from and written to the original stdin and stdout only, one JSON line per
 *   answer, written synchronously. The adapter re-executes itself as a child process whose descriptors 0,
 *   1 and 2 are /dev/null, stderr and stderr, and that speaks the protocol on descriptors 3 and 4 (the
 *   original stdin and stdout). So `console.log`, `process.stdout.write`, `fs.writeSync(1, ...)` and child
 *   processes with inherited stdio all end up on stderr, and reading stdin reads nothing. The launcher
 *   forwards SIGTERM, SIGINT and SIGHUP and exits with the child's status.
 * - A call answer whose line would pass the read cap `hello` gave (`max_reply_bytes`) is sent as
 *   `{"id": ID, "too_large": BYTES}`, so memcert grades it as over the cap without a restart; an answer
 *   whose strings alone pass the cap is never encoded.
 * - Nothing a handler throws or rejects with ends the adapter: load errors make `hello` and `reset`
 *   answer `ok: false`; call errors become error results; an uncaught exception or unhandled rejection
 *   from a handler's background work is logged on stderr and serving goes on (the TS runner's process
 *   would crash by default). `process.exit()` called by a handler does end the process.
 *
 * Non-guarantees: no timeouts (memcert enforces them and restarts the process); not a sandbox (the
 * handler runs with the adapter's full authority).
 *
 * Node 20+ built-in modules only, plus the SDK and whatever the handler module imports.
 */

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PROTOCOL = 1;
const OPS = ['batch'];
const SERVE_FLAG = '--memcert-serve-on-fds-3-4';
const REQUEST_FD = 3;
const ANSWER_FD = 4;
const SDK = '@anthropic-ai/sdk';
const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'];
const SHOWN_MAX = 200;
const ACCEPTED_FORMS =
  "accepted forms are 'path/to/module.mjs:exportName' and 'package/subpath:exportName', naming a memory " +
  'handler class (such as @anthropic-ai/sdk/tools/memory/node:BetaLocalFilesystemMemoryTool) or a factory ' +
  'function makeHandler(baseDir) returning a betaMemoryTool(...) tool or a handlers object';
const USAGE = 'usage: node memcert_adapter.mjs --handler SPEC [--node-path DIR]... [--init JSON]\n';

// --------------------------------------------------------------------------------------------------
// Text helpers

const LONE_SURROGATE_RE = /[\uD800-\uDFFF]/gu;

/** `text` with each unpaired surrogate replaced by U+FFFD (as the SDK's `wellFormed`). */
function wellFormed(text) {
  return text.replace(LONE_SURROGATE_RE, '\uFFFD');
}

/** A plain JSON value with every string and key made well formed. */
function wellFormedDeep(value) {
  if (typeof value === 'string') return wellFormed(value);
  if (Array.isArray(value)) return value.map(wellFormedDeep);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty: a "__proto__" key stays an ordinary key, as JSON.parse made it.
      Object.defineProperty(out, wellFormed(key), {
        value: wellFormedDeep(item),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** One line naming a thrown value, for a reason memcert shows: never throws. */
function describeThrown(e) {
  try {
    if (e instanceof Error) return `${e.name || 'Error'}: ${e.message}`;
    if (e !== null && typeof e === 'object' && typeof e.message === 'string') {
      return `${e.name || 'Error'}: ${e.message}`;
    }
    return `${typeof e} ${String(e)}`;
  } catch {
    return `a ${typeof e} that cannot be shown`;
  }
}

/** A short JSON-ish rendering of a value, for a reason memcert shows: never throws. */
function shown(value) {
  let text;
  try {
    text = typeof value === 'function' ? `function ${value.name || '(anonymous)'}` : JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    try {
      text = String(value);
    } catch {
      text = typeof value;
    }
  }
  return text.length > SHOWN_MAX ? text.slice(0, SHOWN_MAX) + '…' : text;
}

function kindOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const t = typeof value;
  return t === 'object' || t === 'undefined' ? `${t === 'object' ? 'an' : ''} ${t}`.trim() : `a ${t}`;
}

// --------------------------------------------------------------------------------------------------
// Resolving bare specifiers as `import` does, from chosen directories

const CONDITIONS = new Set(['node', 'import', 'default']);
if (process.features && process.features.require_module) CONDITIONS.add('module-sync');

function splitBare(spec) {
  const parts = spec.split('/');
  const n = spec.startsWith('@') ? 2 : 1;
  if (parts.length < n || parts.slice(0, n).some((p) => !p)) return null;
  return { name: parts.slice(0, n).join('/'), subpath: parts.length > n ? './' + parts.slice(n).join('/') : '.' };
}

/** The directory of package `name` as seen from `base` (its node_modules chain), or null. */
function findPackageDir(name, base) {
  let dirs;
  try {
    dirs = createRequire(path.join(base, 'noop.js')).resolve.paths(name) || [];
  } catch {
    return null;
  }
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
  }
  return null;
}

function resolveExportTarget(pkgDir, target, match) {
  if (typeof target === 'string') {
    if (!target.startsWith('./')) return null;
    return path.join(pkgDir, match === undefined ? target : target.split('*').join(match));
  }
  if (Array.isArray(target)) {
    for (const item of target) {
      const resolved = resolveExportTarget(pkgDir, item, match);
      if (resolved) return resolved;
    }
    return null;
  }
  if (target !== null && typeof target === 'object') {
    for (const key of Object.keys(target)) {
      if (!CONDITIONS.has(key)) continue;
      const resolved = resolveExportTarget(pkgDir, target[key], match);
      if (resolved !== undefined) return resolved;
    }
    return undefined;
  }
  return null;
}

/** The file `subpath` of the package in `pkgDir` names for `import`, or null when it is not exported. */
function resolveInPackage(pkgDir, subpath) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  } catch {
    manifest = {};
  }
  let exportsField = manifest.exports;
  if (exportsField === undefined) {
    // No "exports": the legacy rules (main, extension probing), which require.resolve implements.
    try {
      return createRequire(path.join(pkgDir, 'noop.js')).resolve(
        subpath === '.' ? pkgDir : path.join(pkgDir, subpath),
      );
    } catch {
      return null;
    }
  }
  if (
    typeof exportsField === 'string' ||
    Array.isArray(exportsField) ||
    (exportsField !== null && !Object.keys(exportsField).some((k) => k.startsWith('.')))
  ) {
    exportsField = { '.': exportsField };
  }
  if (exportsField === null) return null;
  if (Object.prototype.hasOwnProperty.call(exportsField, subpath) && !subpath.includes('*')) {
    return resolveExportTarget(pkgDir, exportsField[subpath], undefined) ?? null;
  }
  let best = null;
  for (const key of Object.keys(exportsField)) {
    const star = key.indexOf('*');
    if (star === -1 || key.indexOf('*', star + 1) !== -1) continue;
    const prefix = key.slice(0, star);
    const suffix = key.slice(star + 1);
    if (subpath.length >= key.length && subpath.startsWith(prefix) && subpath.endsWith(suffix)) {
      if (!best || prefix.length > best.prefix.length) best = { key, prefix, suffix };
    }
  }
  if (!best) return null;
  const match = subpath.slice(best.prefix.length, subpath.length - best.suffix.length);
  return resolveExportTarget(pkgDir, exportsField[best.key], match) ?? null;
}

/** The file a bare `spec` names, looked up from each of `bases` in turn; null if none has it. */
function resolveBare(spec, bases) {
  const parsed = splitBare(spec);
  if (!parsed) return null;
  for (const base of bases) {
    const pkgDir = findPackageDir(parsed.name, base);
    if (!pkgDir) continue;
    const file = resolveInPackage(pkgDir, parsed.subpath);
    if (file && fs.existsSync(file)) return file;
  }
  return null;
}

function uniqueDirs(dirs) {
  const seen = new Set();
  return dirs.filter((d) => d && !seen.has(d) && seen.add(d));
}

// --------------------------------------------------------------------------------------------------
// The SDK pieces the runner uses, or copies of them (@anthropic-ai/sdk 1.14.0)

function fallbackBetaMemoryTool(handlers) {
  // helpers/beta/memory.ts
  return {
    type: 'memory_20250818',
    name: 'memory',
    parse: (content) => content,
    run: (args) => {
      const handler = handlers[args.command];
      if (!handler) {
        throw new Error(`${args.command} not implemented`);
      }
      return handler.bind(handlers)(args);
    },
  };
}

function fallbackRunRunnableTool(ToolError) {
  // lib/tools/BetaRunnableTool.ts runRunnableTool, toolErrorContent; lib/internal/toolsets/sanitize.ts thrownErrorText
  const toolErrorContent = (e) =>
    ToolError && e instanceof ToolError ? e.content : `Error: ${e instanceof Error ? e.message : String(e)}`;
  return async function runRunnableTool(tool, rawInput, context) {
    try {
      const input = tool.parse ? tool.parse(rawInput) : rawInput;
      const content = await tool.run(input, context);
      return { content, isError: false };
    } catch (e) {
      return { content: toolErrorContent(e), isError: true };
    }
  };
}

async function importFrom(pkgDir, subpath) {
  const file = resolveInPackage(pkgDir, subpath);
  if (!file || !fs.existsSync(file)) return null;
  try {
    return await import(pathToFileURL(file).href);
  } catch (e) {
    process.stderr.write(`memcert adapter: importing ${SDK}/${subpath.slice(2)} failed: ${describeThrown(e)}\n`);
    return null;
  }
}

/** { version, betaMemoryTool, runRunnableTool } from the first SDK found from `bases`, else copies. */
async function loadSdk(bases) {
  let pkgDir = null;
  for (const base of bases) {
    pkgDir = findPackageDir(SDK, base);
    if (pkgDir) break;
  }
  if (!pkgDir) {
    process.stderr.write(
      `memcert adapter: ${SDK} not found from ${bases.join(', ')}; using built-in copies of its ` +
        'betaMemoryTool and runRunnableTool (1.14.0)\n',
    );
    return { version: null, betaMemoryTool: fallbackBetaMemoryTool, runRunnableTool: fallbackRunRunnableTool(null) };
  }
  let version = null;
  try {
    version = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version ?? null;
  } catch {
    // keep null
  }
  const memory = await importFrom(pkgDir, './helpers/beta/memory');
  const runnable = await importFrom(pkgDir, './lib/tools/BetaRunnableTool');
  let runRunnableTool = runnable && typeof runnable.runRunnableTool === 'function' ? runnable.runRunnableTool : null;
  if (!runRunnableTool) {
    const toolError = await importFrom(pkgDir, './lib/tools/ToolError');
    runRunnableTool = fallbackRunRunnableTool(toolError && toolError.ToolError);
    process.stderr.write(`memcert adapter: ${SDK} ${version} has no runRunnableTool; using a copy of 1.14.0's\n`);
  }
  let betaMemoryTool = memory && typeof memory.betaMemoryTool === 'function' ? memory.betaMemoryTool : null;
  if (!betaMemoryTool) {
    betaMemoryTool = fallbackBetaMemoryTool;
    process.stderr.write(`memcert adapter: ${SDK} ${version} has no betaMemoryTool; using a copy of 1.14.0's\n`);
  }
  return { version, betaMemoryTool, runRunnableTool };
}

// --------------------------------------------------------------------------------------------------
// Loading the handler export

class LoadError extends Error {}

function looksLikeClass(fn) {
  try {
    if (/^class\b/.test(Function.prototype.toString.call(fn))) return true;
  } catch {
    // a revoked proxy or the like: treat as a factory
  }
  const proto = fn.prototype;
  if (!proto || typeof proto !== 'object') return false;
  return Object.getOwnPropertyNames(proto).some((n) => n === 'run' || COMMANDS.includes(n));
}

async function loadHandler(spec, nodePaths) {
  const colon = spec.lastIndexOf(':');
  const target = colon > 0 ? spec.slice(0, colon) : '';
  const exportName = colon > 0 ? spec.slice(colon + 1) : '';
  if (!target || !exportName) {
    throw new LoadError(`Handler spec ${JSON.stringify(spec)} is malformed; ${ACCEPTED_FORMS}.`);
  }

  const cwd = process.cwd();
  const explicitFile = path.isAbsolute(target) || /^\.\.?([/\\]|$)/.test(target);
  const hasExtension = /\.[cm]?js$/.test(target);
  let file = null;
  if (explicitFile || (hasExtension && isFile(path.resolve(target)))) {
    file = path.resolve(target);
    if (!isFile(file)) {
      throw new LoadError(
        `Cannot load handler ${JSON.stringify(spec)}: the file ${JSON.stringify(target)} does not exist; ${ACCEPTED_FORMS}.`,
      );
    }
  } else {
    file = resolveBare(target, uniqueDirs([cwd, ...nodePaths]));
    if (!file) {
      const where = ['the current directory', ...nodePaths.map((d) => JSON.stringify(d))].join(', ');
      throw new LoadError(
        `Cannot load handler ${JSON.stringify(spec)}: ${hasExtension ? 'no file and ' : ''}no package export ` +
          `${JSON.stringify(target)} is found from ${where}; ${ACCEPTED_FORMS}.`,
      );
    }
  }

  let namespace;
  try {
    namespace = await import(pathToFileURL(file).href);
  } catch (e) {
    throw new LoadError(
      `Cannot load handler ${JSON.stringify(spec)}: importing ${JSON.stringify(target)} threw ${describeThrown(e)}.`,
    );
  }
  let exported = namespace[exportName];
  const fallback = namespace.default;
  if (exported === undefined && fallback !== null && (typeof fallback === 'object' || typeof fallback === 'function')) {
    exported = fallback[exportName]; // a CommonJS module whose exports the lexer could not list
  }
  if (exported === undefined) {
    throw new LoadError(
      `Cannot load handler ${JSON.stringify(spec)}: ${JSON.stringify(target)} has no export ` +
        `${JSON.stringify(exportName)}; ${ACCEPTED_FORMS}.`,
    );
  }
  if (typeof exported !== 'function') {
    throw new LoadError(
      `Cannot use handler ${JSON.stringify(spec)}: ${JSON.stringify(exportName)} is ${kindOf(exported)}, ` +
        `not a class or a factory function; ${ACCEPTED_FORMS}.`,
    );
  }
  const kind = typeof exported.init === 'function' ? 'init' : looksLikeClass(exported) ? 'class' : 'factory';
  const sdk = await loadSdk(uniqueDirs([path.dirname(file), cwd, ...nodePaths]));
  return { exported, exportName, kind, sdk };
}

function isFile(p) {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

// --------------------------------------------------------------------------------------------------
// Rendering, as the runner puts a result on the wire

/**
 * `{content}` as the API would receive `content` (the SDK's request encoder is JSON.stringify), or
 * `{problem}` when that is not tool_result content.
 */
function renderContent(content) {
  let json;
  try {
    json = JSON.stringify(content);
  } catch (e) {
    return { problem: `it cannot be encoded as JSON (${describeThrown(e)})` };
  }
  if (json === undefined) return { content: null }; // undefined, a function, a symbol: no "content" key on the wire
  const value = JSON.parse(json);
  if (value === null || typeof value === 'string') return { content: wellFormedDeep(value) };
  if (!Array.isArray(value)) {
    return {
      problem: `it is ${kindOf(value)} (${shown(value)}), not a string, a list of content blocks or undefined/null`,
    };
  }
  for (let i = 0; i < value.length; i++) {
    const block = value[i];
    if (block === null || typeof block !== 'object' || Array.isArray(block) || typeof block.type !== 'string') {
      return { problem: `item ${i} of the list, ${shown(block)}, is not a content block (an object with a "type")` };
    }
    if (block.type === 'text' && typeof block.text !== 'string') {
      return { problem: `item ${i} of the list is a text block without a string "text"` };
    }
  }
  return { content: wellFormedDeep(value) };
}

// --------------------------------------------------------------------------------------------------
// Serving

/** VALUE with `{base}` and `{store}` replaced in every string, nested ones too. */
function fillPlaceholders(value, baseDir, storeDir) {
  if (typeof value === 'string') return value.split('{base}').join(baseDir).split('{store}').join(storeDir);
  if (Array.isArray(value)) return value.map((v) => fillPlaceholders(v, baseDir, storeDir));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillPlaceholders(v, baseDir, storeDir)]));
  }
  return value;
}

class Adapter {
  /** `init`: the parsed `--init` JSON (undefined without it). */
  constructor(spec, loaded, loadError, init) {
    this.spec = spec;
    this.loaded = loaded;
    this.loadError = loadError;
    this.init = init;
    this.tool = null;
    // The read cap memcert gave in `hello` (its --max-reply-bytes), or null: a call answer whose line
    // would be longer is sent as {id, too_large: BYTES} instead (docs/protocol.md), and the process is kept.
    this.maxReply = null;
  }

  /** The build arguments for one reset: `[base_dir]`, or `--init` with its placeholders filled. */
  buildArgs(baseDir, storeDir) {
    if (this.init === undefined) return [baseDir];
    const filled = fillPlaceholders(this.init, baseDir, storeDir);
    return Array.isArray(filled) ? filled : [filled];
  }

  /** [answer, done] for one decoded request. */
  async answer(request) {
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      return [{ ok: false, error: 'a request must be a JSON object with an "op" field' }, false];
    }
    const op = request.op;
    if (op === 'shutdown') return [{ ok: true }, true];
    if (op === 'hello') return [this.hello(request), false];
    if (op === 'reset') return [await this.reset(request), false];
    if (op === 'call') return [await this.call(request), false];
    if (op === 'batch') return [await this.batch(request), false];
    return [{ ok: false, error: `unknown op ${shown(op)}; expected hello, reset, call, batch or shutdown` }, false];
  }

  hello(request) {
    if (request.protocol !== PROTOCOL) {
      return {
        ok: false,
        protocol: PROTOCOL,
        error: `unsupported protocol ${shown(request.protocol)}; this adapter speaks protocol ${PROTOCOL}`,
      };
    }
    if (this.loadError !== null) return { ok: false, error: this.loadError };
    const cap = request.max_reply_bytes;
    this.maxReply = Number.isSafeInteger(cap) && cap > 0 ? cap : null;
    const version = this.loaded.sdk.version;
    return {
      ok: true,
      protocol: PROTOCOL,
      handler: this.spec,
      ops: OPS,
      sdk: version === null ? null : `${SDK} ${version}`,
      runtime: `Node ${process.version}`,
    };
  }

  async reset(request) {
    if (this.loadError !== null) return { ok: false, error: this.loadError };
    this.tool = null; // whatever happens next, no call may reach the previous case's instance
    const baseDir = request.base_dir;
    if (typeof baseDir !== 'string' || !baseDir) {
      return { ok: false, error: 'reset needs "base_dir", an absolute directory path' };
    }
    const storeDir =
      typeof request.memories_dir === 'string' && request.memories_dir ? request.memories_dir
      : path.join(baseDir, 'memories');
    const { exported, exportName, kind, sdk } = this.loaded;
    const args = this.buildArgs(baseDir, storeDir);
    const shownArgs = this.init === undefined ? 'base_dir' : args.map((a) => shown(a)).join(', ');
    const how =
      kind === 'init' ? `${exportName}.init(${shownArgs})`
      : kind === 'class' ? `new ${exportName}(${shownArgs})`
      : `${exportName}(${shownArgs})`;
    let made;
    try {
      if (kind === 'init') made = await exported.init(...args);
      else if (kind === 'class') made = new exported(...args);
      else made = await exported(...args);
    } catch (e) {
      return { ok: false, error: `${how} threw ${describeThrown(e)}` };
    }
    if (made !== null && (typeof made === 'object' || typeof made === 'function') && typeof made.run === 'function') {
      this.tool = made;
    } else if (made !== null && typeof made === 'object') {
      try {
        this.tool = sdk.betaMemoryTool(made);
      } catch (e) {
        return { ok: false, error: `betaMemoryTool(${how}) threw ${describeThrown(e)}` };
      }
    } else {
      return {
        ok: false,
        error: `${how} gave ${kindOf(made)} (${shown(made)}), not a memory tool (an object with a run method) or a handlers object`,
      };
    }
    return { ok: true };
  }

  /** The answer to one tool call, as the runner would send its tool_result. Never rejects. */
  async runCall(id, input) {
    const toolUse = { type: 'tool_use', id, name: 'memory', input };
    let outcome;
    try {
      // Called synchronously up to the handler's first await, as the runner's Promise.all map does.
      outcome = await this.loaded.sdk.runRunnableTool(this.tool, input, {
        toolUse,
        toolUseBlock: toolUse,
        signal: undefined,
      });
    } catch (e) {
      return {
        id,
        ok: false,
        error:
          'the call failed and the SDK could not turn what was thrown into an error result ' +
          `(${describeThrown(e)}); the TS runner would stop the run here`,
      };
    }
    const rendered = renderContent(outcome.content);
    if (rendered.problem !== undefined) {
      return {
        id,
        ok: false,
        error: `the handler's ${outcome.isError ? 'error' : 'result'} is not tool_result content: ${rendered.problem}`,
      };
    }
    return { id, content: rendered.content, is_error: outcome.isError === true };
  }

  noInstance() {
    return this.loadError ?? 'no handler instance: the last reset failed or none was sent';
  }

  async call(request) {
    const id = request.id;
    if (typeof id !== 'string') return { id: id ?? null, ok: false, error: 'call needs "id", a string' };
    if (this.tool === null) return { id, ok: false, error: this.noInstance() };
    return this.runCall(id, request.input);
  }

  async batch(request) {
    const id = request.id;
    if (typeof id !== 'string') return { id: id ?? null, ok: false, error: 'batch needs "id", a string' };
    const calls = request.calls;
    if (!Array.isArray(calls)) return { id, ok: false, error: 'batch needs "calls", a list of {"id","input"} objects' };
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i];
      if (c === null || typeof c !== 'object' || Array.isArray(c) || typeof c.id !== 'string') {
        return { id, ok: false, error: `item ${i} of "calls" is not an object with "id", a string` };
      }
    }
    if (this.tool === null) return { id, ok: false, error: this.noInstance() };
    // As generateToolResponse in lib/tools/BetaToolRunner: all tool_use blocks of a turn at once.
    const results = await Promise.all(calls.map(async (c) => this.runCall(c.id, c.input)));
    return { id, results };
  }
}

// --------------------------------------------------------------------------------------------------
// Protocol channel (in the child: requests on fd 3, answers on fd 4)

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function writeAll(fd, buffer) {
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += fs.writeSync(fd, buffer, offset, buffer.length - offset);
    } catch (e) {
      if (e && e.code === 'EAGAIN') {
        Atomics.wait(sleeper, 0, 0, 2); // a non-blocking pipe that is full: wait for memcert to read
        continue;
      }
      if (e && e.code === 'EPIPE') process.exit(1); // memcert is gone
      throw e;
    }
  }
}

function encodeAnswer(answer) {
  // Every string made well formed: JSON.stringify would write a lone surrogate as a "\udXXX" escape, which the
  // protocol forbids (content is already folded; this covers ids and error texts quoting the handler).
  const fold = (_key, value) => (typeof value === 'string' ? wellFormed(value) : value);
  let text;
  try {
    text = JSON.stringify(answer, fold);
  } catch (e) {
    text = JSON.stringify({
      id: typeof answer.id === 'string' ? answer.id : null,
      ok: false,
      error: `the answer cannot be encoded as JSON: ${describeThrown(e)}`,
    });
  }
  return Buffer.from(text + '\n', 'utf8');
}

/** A lower bound on the bytes of `value` as JSON: the UTF-16 units of the strings in its arrays and plain
 * objects' values (each is at least one byte once encoded), counted until it passes `enough`; walked with a
 * stack, not recursion. Keys are not counted, nor anything in an object with a `toJSON` method (JSON.stringify
 * writes what that returns), so the bound never passes what JSON.stringify writes. */
function textFloor(value, enough) {
  let total = 0;
  const stack = [value];
  while (stack.length > 0 && total <= enough) {
    const item = stack.pop();
    if (typeof item === 'string') total += item.length;
    else if (Array.isArray(item)) for (const v of item) stack.push(v);
    else if (item !== null && typeof item === 'object' && typeof item.toJSON !== 'function') {
      for (const k of Object.keys(item)) stack.push(item[k]);
    }
  }
  return total;
}

/** `answer` as one JSON line, or, for a call answer whose line would pass `cap` bytes (the newline left out),
 * `{id, too_large: BYTES}`: memcert grades that as an answer over its cap and keeps the process, so a handler
 * answering a 64 MiB view is not restarted. BYTES is the line's length, or a lower bound on it when that alone
 * passes `cap` (the answer is then never encoded). */
function encodeWithin(answer, cap) {
  if (cap === null || answer === null || typeof answer !== 'object' || !('content' in answer)) {
    return encodeAnswer(answer);
  }
  const floor = textFloor(answer, cap);
  if (floor > cap) return encodeAnswer({ id: answer.id, too_large: floor });
  const line = encodeAnswer(answer);
  if (line.length - 1 > cap) return encodeAnswer({ id: answer.id, too_large: line.length - 1 });
  return line;
}

function openRequests(fd) {
  const stat = fs.fstatSync(fd);
  if (stat.isFIFO() || stat.isSocket()) return new net.Socket({ fd, readable: true, writable: false });
  return fs.createReadStream(null, { fd, autoClose: false });
}

/** Raw request lines (Buffers without the "\n"); the last one may lack its "\n". */
async function* rawLines(stream) {
  let pending = [];
  for await (const chunk of stream) {
    let start = 0;
    let newline;
    while ((newline = chunk.indexOf(10, start)) !== -1) {
      pending.push(chunk.subarray(start, newline));
      const line = Buffer.concat(pending);
      pending = [];
      start = newline + 1;
      yield line;
    }
    if (start < chunk.length) pending.push(Buffer.from(chunk.subarray(start)));
  }
  if (pending.length) yield Buffer.concat(pending);
}

function parseArgs(argv) {
  const args = { handler: null, nodePaths: [], init: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const [flag, inline] = arg.startsWith('--') && eq !== -1 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, null];
    if (flag === '--help' || flag === '-h') return { help: true };
    if (flag === '--handler' || flag === '--node-path' || flag === '--init') {
      const value = inline ?? argv[++i];
      if (value === undefined || value === '') return { error: `${flag} needs a value` };
      if (flag === '--handler') args.handler = value;
      else if (flag === '--node-path') args.nodePaths.push(path.resolve(value));
      else {
        try {
          args.init = JSON.parse(value);
        } catch (e) {
          return { error: `--init is not valid JSON (${describeThrown(e)})` };
        }
      }
      continue;
    }
    return { error: `unknown argument ${JSON.stringify(arg)}` };
  }
  if (args.handler === null) return { error: '--handler SPEC is required' };
  return args;
}

async function serve(argv) {
  const args = parseArgs(argv);
  if (args.error || args.help) {
    process.stderr.write(USAGE);
    process.exit(2);
  }
  // A handler's stray background failure must not end the process: the case it belongs to is judged on
  // its answer, and memcert shows stderr next to it.
  process.on('uncaughtException', (e) => {
    process.stderr.write(`memcert adapter: uncaught exception from the handler: ${describeThrown(e)}\n`);
    if (e instanceof Error && e.stack) process.stderr.write(e.stack + '\n');
  });
  process.on('unhandledRejection', (e) => {
    process.stderr.write(`memcert adapter: unhandled rejection from the handler: ${describeThrown(e)}\n`);
  });

  let loaded = null;
  let loadError = null;
  try {
    loaded = await loadHandler(args.handler, args.nodePaths);
  } catch (e) {
    loadError =
      e instanceof LoadError ? e.message : `Cannot load handler ${JSON.stringify(args.handler)}: ${describeThrown(e)}.`;
  }
  const adapter = new Adapter(args.handler, loaded, loadError, args.init);
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

  let input;
  try {
    input = openRequests(REQUEST_FD);
  } catch (e) {
    process.stderr.write(`memcert adapter: cannot read requests: ${describeThrown(e)}\n`);
    process.exit(1);
  }
  try {
    for await (const raw of rawLines(input)) {
      let text;
      try {
        text = decoder.decode(raw);
      } catch (e) {
        writeAll(ANSWER_FD, encodeAnswer({ ok: false, error: `request is not valid UTF-8: ${describeThrown(e)}` }));
        continue;
      }
      if (text.endsWith('\r')) text = text.slice(0, -1);
      if (!text.trim()) continue;
      let answer;
      let done = false;
      let request;
      try {
        request = JSON.parse(text);
      } catch (e) {
        answer = { ok: false, error: `request is not valid JSON: ${describeThrown(e)}` };
      }
      if (answer === undefined) {
        try {
          [answer, done] = await adapter.answer(request);
        } catch (e) {
          // Only an adapter bug gets here; say so rather than die.
          const id = request && typeof request.id === 'string' ? request.id : undefined;
          answer = { ...(id === undefined ? {} : { id }), ok: false, error: `adapter failure: ${describeThrown(e)}` };
        }
      }
      writeAll(ANSWER_FD, encodeWithin(answer, adapter.maxReply));
      if (done) break;
    }
  } catch (e) {
    if (!(e && (e.code === 'EIO' || e.code === 'ECONNRESET'))) {
      process.stderr.write(`memcert adapter: reading requests failed: ${describeThrown(e)}\n`);
    }
  }
  // End of input or shutdown: exit now, whatever timers or sockets the handler left open.
  process.exit(0);
}

// --------------------------------------------------------------------------------------------------
// Launcher: re-run this file with the protocol on fds 3/4 and stdout pointed at stderr

function launch(argv) {
  const args = parseArgs(argv);
  if (args.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (args.error) {
    process.stderr.write(`memcert_adapter.mjs: ${args.error}\n${USAGE}`);
    process.exit(2);
  }
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [...process.execArgv, self, SERVE_FLAG, ...argv], {
    stdio: ['ignore', 2, 2, 0, 1],
  });
  const forwarded = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  const forward = (signal) => {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  };
  for (const signal of forwarded) process.on(signal, forward);
  child.on('error', (e) => {
    process.stderr.write(`memcert_adapter.mjs: cannot start ${process.execPath}: ${describeThrown(e)}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      for (const s of forwarded) process.removeListener(s, forward);
      process.kill(process.pid, signal);
      setImmediate(() => process.exit(1)); // a signal that did not end us
      return;
    }
    process.exit(code ?? 1);
  });
}

if (process.argv[2] === SERVE_FLAG) {
  serve(process.argv.slice(3));
} else {
  launch(process.argv.slice(2));
}
