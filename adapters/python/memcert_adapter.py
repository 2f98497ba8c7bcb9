#!/usr/bin/env python3
"""memcert stdio protocol v1 adapter for Python memory-tool handlers.

Runs one subclass of ``anthropic.tools.BetaAbstractMemoryTool`` (sync) or
``anthropic.tools.BetaAsyncAbstractMemoryTool`` (async) behind memcert's stdio
protocol (``docs/protocol.md``), calling it exactly as the ``anthropic`` SDK's
tool runner does and rendering its results and exceptions as the runner puts
them on the wire.

Usage::

    python3 memcert_adapter.py --handler SPEC [--init JSON] [--set MODULE:ATTR=VALUE]...

SPEC is ``path/to/file.py:ClassName`` (the file is loaded with importlib and
its directory is put on ``sys.path``) or ``package.module:ClassName`` (for
example ``anthropic.tools:BetaLocalFilesystemMemoryTool``). ``--init`` is a JSON
object of keyword arguments for the constructor. In its string values (nested
ones too) ``{base}`` stands for the case's ``base_dir`` and ``{store}`` for its
``memories_dir``; when any value uses one, ``base_path=`` is not passed
(``{"root": "{store}"}``), else ``reset`` adds ``base_path=base_dir``. A value
that is exactly one placeholder is passed as a ``pathlib.Path`` when the
constructor's parameter of that name is annotated as a path, else as a string.
``--set MODULE:ATTR=VALUE`` (repeatable) sets a module-level attribute before
the handler is built, at every ``reset`` (for handlers that keep their root in
a module global); the module is imported by name (the handler file's folder is
on ``sys.path``, and the file itself is registered under its stem), the same
placeholders are replaced, and the value is a ``pathlib.Path`` when the
attribute held a path, else a string; a class whose constructor takes no
``base_path=`` is then built with ``--init``'s arguments alone. SPEC may also name a factory function
instead of a class (``path/to/file.py:make_handler``): it is called as
``make_handler(base_dir, **init)`` on every ``reset`` (awaited when it is
async) and must return an instance of one of the two memory tool classes. The
handler is built once over a throw-away directory when ``hello`` arrives, so
one that cannot be built at all fails ``hello`` with a message naming the forms
to use.

``hello`` names the runtime: ``"sdk"`` is ``"anthropic <version>"`` (null when
the package is not importable) and ``"runtime"`` the interpreter
(``"CPython 3.12.3"``).

Guarantees:

- The protocol is written only to the original stdout, one JSON line per
  request, flushed. ``sys.stdout``, ``sys.stdin`` and file descriptors 1 and 0
  are pointed at stderr and ``/dev/null`` before the handler is loaded, so a
  handler that prints or reads stdin cannot corrupt the protocol. stderr is
  left alone.
- Content is rendered with the SDK's own functions when they are importable
  (``anthropic.lib.tools._tool_dispatch``), so the text is byte-identical to
  what the runner sends; otherwise with a copy of them.
- A call answer whose line would pass the read cap ``hello`` gave
  (``max_reply_bytes``) is sent as ``{"id": ID, "too_large": BYTES}``, so
  memcert grades it as over the cap without a restart; an answer whose
  strings alone pass the cap is never encoded.
- No exception raised by the handler ends the adapter, not even a
  ``BaseException`` such as ``KeyboardInterrupt`` or ``SystemExit`` (the SDK
  runner would let those through and stop).

Non-guarantees:

- No timeouts: a handler that hangs hangs the adapter; memcert enforces the
  per-call timeout and restarts the process.
- Not a sandbox: the handler runs with the adapter's full authority.

Python 3.9+ standard library only, plus the ``anthropic`` package it loads.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys

PROTOCOL = 1
FIELD_MAX = 4096  # anthropic's _toolsets._sanitize.FIELD_MAX: the cut for an exception's repr
ACCEPTED_FORMS = (
    "accepted forms are 'path/to/file.py:ClassName' and 'package.module:ClassName', naming a subclass of "
    "anthropic.tools.BetaAbstractMemoryTool or anthropic.tools.BetaAsyncAbstractMemoryTool built with base_path= "
    "(add other constructor arguments with --python-init JSON), or 'path/to/file.py:make_handler', a function "
    "that takes the base directory and returns such a handler (it may be async)"
)
NO_BASE_PATH_HINT = (
    "give the constructor its folder with --python-init, where {{base}} is the case's base folder and {{store}} "
    "its memories folder (then base_path= is not passed): --python-init '{{\"{param}\": \"{{store}}\"}}'; set a "
    "module-level root with --python-set 'MODULE:ATTR={{store}}' (at every reset, before the handler is built); "
    "or write a factory, 'path/to/file.py:make_handler':\n"
    "    def make_handler(base_dir):\n"
    "        return {cls}({param}=os.path.join(base_dir, \"memories\"))"
)
NO_ARGS_HINT = (
    "it takes no arguments: if it keeps its root in a module-level variable, set it at every reset, before the "
    "handler is built, with --python-set '{module}:ATTR={{store}}' ({{store}} is the case's memories folder, "
    "{{base}} its base folder); or write a factory, 'path/to/file.py:make_handler':\n"
    "    def make_handler(base_dir):\n"
    "        {module}.ATTR = os.path.join(base_dir, \"memories\")\n"
    "        return {cls}()"
)
PLACEHOLDERS = ("{base}", "{store}")
LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


# --------------------------------------------------------------------------------------------------
# Protocol channel


def take_protocol_channel():
    """Keep the real stdin/stdout for the protocol; give the handler stderr and /dev/null instead."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb")  # os.dup makes a non-inheritable descriptor
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    inp = os.fdopen(os.dup(0), "rb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(os.devnull)
    return inp, out


# --------------------------------------------------------------------------------------------------
# Rendering, as the SDK tool runner does it (anthropic 2.14.0, lib/tools/_beta_runner.py `_run_tool`)


def well_formed(text):
    """`text` with each unpaired surrogate replaced by U+FFFD (as `_toolsets._sanitize.well_formed`)."""
    return LONE_SURROGATE_RE.sub("\ufffd", text)


def error_text(exc):
    """`repr(exc)`, well formed, cut to 4096 characters (as `_toolsets._sanitize.error_text`)."""
    return well_formed(repr(exc))[:FIELD_MAX]


def _fallback_result_content(content):
    """Copy of `_tool_dispatch.tool_result_content`, for SDK versions that lack it."""
    if content is None:
        return None
    if isinstance(content, str):
        return well_formed(content)
    blocks = list(content)
    for i, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                fixed = well_formed(text)
                if fixed != text:
                    blocks[i] = {**block, "text": fixed}
    return blocks


def load_renderers():
    """(tool_result_content, tool_error_content): the SDK's own functions, or faithful copies."""
    try:
        from anthropic.lib.tools._tool_dispatch import tool_error_content, tool_result_content

        return tool_result_content, tool_error_content
    except BaseException:  # noqa: B036 - fall back to the copies below
        pass

    try:
        from anthropic.tools import ToolError
    except BaseException:  # noqa: B036
        ToolError = ()  # noqa: N806 - nothing can be a ToolError without the SDK

    def tool_error_content(exc):
        if ToolError and isinstance(exc, ToolError):
            return _fallback_result_content(exc.content)
        return error_text(exc)

    return _fallback_result_content, tool_error_content


def content_problem(content):
    """Why rendered content is not a string, a list of content blocks or None; None if it is.

    The SDK passes any iterable through `list()`, so a handler returning a dict sends its keys, which the
    Messages API rejects; the adapter reports that instead of forwarding it.
    """
    if content is None or isinstance(content, str):
        return None
    for i, block in enumerate(content):
        if hasattr(block, "model_dump"):  # an SDK model such as BetaTextBlock: the SDK's encoder dumps it
            continue
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            shown = well_formed(repr(block))[:200]
            return f"item {i} of the list, {shown}, is not a content block (an object with a \"type\")"
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            return f"item {i} of the list is a text block without a string \"text\""
    return None


def load_encoder():
    """A function turning an answer into one JSON line, encoded as the SDK encodes a request body."""
    encode = None
    try:
        from anthropic._utils._json import openapi_dumps_str

        encode = openapi_dumps_str
    except BaseException:  # noqa: B036 - fall back to the standard encoder
        pass
    if encode is None:
        plain = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        encode = plain.encode

    def line(answer):
        # Lone surrogates would make the line invalid UTF-8; the SDK folds them in text, we fold them everywhere.
        return well_formed(encode(answer)).encode("utf-8") + b"\n"

    return line


def text_floor(value, enough):
    """A lower bound on the bytes of VALUE as JSON: the characters of its strings (each is at least one
    byte once encoded), counted until it passes ENOUGH. Walks lists and dicts with a stack, not recursion."""
    total, stack = 0, [value]
    while stack and total <= enough:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return total


def encode_line_within(encode_line, answer, cap):
    """ANSWER as one JSON line (ENCODE_LINE), or, for a call answer whose line would pass CAP bytes (the
    newline left out), the line {"id": ID, "too_large": BYTES}: memcert grades it as an answer over its cap
    and keeps the process, so a handler that answers a 64 MiB view is not restarted. BYTES is the line's
    length, or a lower bound on it when that alone passes CAP (the answer is then never encoded)."""
    if cap is None or not isinstance(answer, dict) or "content" not in answer:
        return encode_line(answer)
    floor = text_floor(answer, cap)
    if floor > cap:
        return encode_line({"id": answer.get("id"), "too_large": floor})
    line = encode_line(answer)
    if len(line) - 1 > cap:
        return encode_line({"id": answer.get("id"), "too_large": len(line) - 1})
    return line


# --------------------------------------------------------------------------------------------------
# Loading the handler class


class LoadError(Exception):
    """The handler spec cannot be turned into a usable class; the message is one sentence for the user."""


def _load_module_from_file(spec, file_part):
    path = os.path.abspath(file_part)
    if not os.path.isfile(path):
        raise LoadError(f"Cannot load handler {spec!r}: the file {file_part!r} does not exist; {ACCEPTED_FORMS}.")
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem
    if not stem.isidentifier() or stem in sys.modules:
        name = "_memcert_handler_" + re.sub(r"\W", "_", stem)
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise LoadError(f"Cannot load handler {spec!r}: {file_part!r} is not a loadable Python file; {ACCEPTED_FORMS}.")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: B036 - an import-time SystemExit must not end the adapter
        sys.modules.pop(name, None)
        raise LoadError(f"Cannot load handler {spec!r}: running {file_part!r} raised {error_text(exc)}.") from None
    return module


def _load_module_by_name(spec, module_name):
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise LoadError(f"Handler spec {spec!r} is malformed; {ACCEPTED_FORMS}.")
    try:
        return importlib.import_module(module_name)
    except BaseException as exc:  # noqa: B036
        raise LoadError(f"Cannot load handler {spec!r}: importing {module_name!r} raised {error_text(exc)}.") from None


FACTORY = "factory"


def uses_placeholders(value):
    """Whether a string anywhere in the JSON value VALUE holds ``{base}`` or ``{store}``."""
    if isinstance(value, str):
        return any(p in value for p in PLACEHOLDERS)
    if isinstance(value, dict):
        return any(uses_placeholders(v) for v in value.values())
    if isinstance(value, list):
        return any(uses_placeholders(v) for v in value)
    return False


def fill_placeholders(value, base_dir, store_dir):
    """VALUE with ``{base}`` and ``{store}`` replaced in every string (nested ones too)."""
    if isinstance(value, str):
        return value.replace("{base}", base_dir).replace("{store}", store_dir)
    if isinstance(value, dict):
        return {k: fill_placeholders(v, base_dir, store_dir) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_placeholders(v, base_dir, store_dir) for v in value]
    return value


def _path_annotated(param):
    """Whether an inspect.Parameter is annotated as a path (``Path``, ``Optional[Path]``, ``"Path"``...)."""
    if param is None or param.annotation is param.empty:
        return False
    note = param.annotation
    text = note if isinstance(note, str) else repr(note)
    if inspect.isclass(note):
        import pathlib

        return issubclass(note, pathlib.PurePath)
    return "Path" in text and "str" not in text


def _first_param_name(params):
    """The name of the constructor's first named parameter besides self, or None when it has none."""
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            return p.name
    return None


def takes_base_path(cls):
    """Whether the constructor of CLS accepts base_path= (or **kwargs); True when it cannot be inspected."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "base_path" and p.kind != p.POSITIONAL_ONLY or p.kind == p.VAR_KEYWORD for p in params)


def load_handler_class(spec, placeholders=False):
    """Return (cls, is_async) for SPEC, or (function, FACTORY) for a factory; raise LoadError naming SPEC
    and what is wrong. With PLACEHOLDERS (--init uses {base} or {store}, or --set is given) the constructor
    need not take base_path=."""
    target, sep, class_name = spec.rpartition(":")
    if not sep or not target or not class_name.isidentifier():
        raise LoadError(f"Handler spec {spec!r} is malformed; {ACCEPTED_FORMS}.")

    try:
        from anthropic.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool
    except BaseException as exc:  # noqa: B036
        raise LoadError(
            f"Cannot load handler {spec!r}: the 'anthropic' package is not importable by {sys.executable} "
            f"({error_text(exc)}); install anthropic==2.14.0 for it "
            "or point memcert at another interpreter with --python-exe."
        ) from None

    is_file = target.endswith(".py") or os.sep in target or (os.altsep is not None and os.altsep in target)
    module = _load_module_from_file(spec, target) if is_file else _load_module_by_name(spec, target)

    cls = getattr(module, class_name, None)
    if cls is None:
        raise LoadError(f"Cannot load handler {spec!r}: {target!r} defines no {class_name!r}; {ACCEPTED_FORMS}.")
    if not inspect.isclass(cls):
        if inspect.isroutine(cls):
            return cls, FACTORY
        raise LoadError(f"Cannot use handler {spec!r}: {class_name!r} is not a class or a function; {ACCEPTED_FORMS}.")
    if issubclass(cls, BetaAbstractMemoryTool):
        is_async = False
    elif issubclass(cls, BetaAsyncAbstractMemoryTool):
        is_async = True
    else:
        raise LoadError(
            f"Cannot use handler {spec!r}: {class_name!r} is not a memory tool class; {ACCEPTED_FORMS}."
        )
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise LoadError(f"Cannot use handler {spec!r}: {class_name!r} is abstract (it does not implement {missing}).")
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        params = None
    if (
        not placeholders
        and params is not None
        and not any(p.name == "base_path" and p.kind != p.POSITIONAL_ONLY or p.kind == p.VAR_KEYWORD for p in params)
    ):
        params = list(params)
        param = _first_param_name(params)
        if param is None:
            hint = NO_ARGS_HINT.format(module=getattr(cls, "__module__", "MODULE"), cls=class_name)
        else:
            hint = NO_BASE_PATH_HINT.format(param=param, cls=class_name)
        raise LoadError(
            f"Cannot use handler {spec!r}: the constructor of {class_name!r} takes no base_path= keyword argument, "
            f"which memcert uses to give each test case a fresh directory; {hint}"
        )
    return cls, is_async


def parse_set(entry):
    """(module, attribute, value) of a ``--set MODULE:ATTR=VALUE`` entry; LoadError when malformed."""
    target, eq, value = entry.partition("=")
    module, colon, attr = target.partition(":")
    if not eq or not colon or not attr.isidentifier() or not all(p.isidentifier() for p in module.split(".")):
        raise LoadError(f"--set {entry!r} is not MODULE:ATTR=VALUE (for example 'my_mod:MEMORY_ROOT={{store}}').")
    return module, attr, value


def runtime_names():
    """(sdk, runtime): ``"anthropic <version>"`` or None, and the interpreter, e.g. ``"CPython 3.12.3"``."""
    import platform

    version = None
    try:
        from importlib import metadata

        version = metadata.version("anthropic")
    except BaseException:  # noqa: B036 - a missing or odd distribution is not an error
        try:
            import anthropic

            version = getattr(anthropic, "__version__", None)
        except BaseException:  # noqa: B036
            version = None
    sdk = f"anthropic {version}" if isinstance(version, str) and version else None
    return sdk, f"{platform.python_implementation()} {platform.python_version()}"


# --------------------------------------------------------------------------------------------------
# Serving


class BuildError(Exception):
    """The handler could be called but did not give a memory tool."""


class Adapter:
    """Answers protocol requests for one handler class."""

    def __init__(self, spec, cls, is_async, init_kwargs, load_error, sets=()):
        self.spec = spec
        self.cls = cls
        self.factory = is_async == FACTORY
        self.is_async = False if self.factory else is_async
        self.init_kwargs = init_kwargs
        self.sets = list(sets)
        # base_path= is left out when --init places the folders itself, or when --set points a module-level
        # root and the constructor has no base_path to take.
        self.placeholders = uses_placeholders(init_kwargs) or (
            bool(self.sets) and cls is not None and not self.factory and not takes_base_path(cls)
        )
        self.load_error = load_error
        # The read cap memcert gave in `hello` (its --max-reply-bytes), or None: an answer line longer than
        # this is sent as {"id", "too_large": BYTES} instead (docs/protocol.md), so the process is kept.
        self.max_reply = None
        self.instance = None
        self.loop = None
        self.result_content, self.error_content = load_renderers()

    def answer(self, request):
        """The answer to one decoded request, and whether to exit after sending it."""
        if not isinstance(request, dict):
            return {"ok": False, "error": "a request must be a JSON object with an \"op\" field"}, False
        op = request.get("op")
        if op == "shutdown":
            return {"ok": True}, True
        if op == "hello":
            return self.hello(request), False
        if op == "reset":
            return self.reset(request), False
        if op == "call":
            return self.call(request), False
        return {"ok": False, "error": f"unknown op {op!r}; expected hello, reset, call or shutdown"}, False

    def hello(self, request):
        if request.get("protocol") != PROTOCOL:
            return {
                "ok": False,
                "protocol": PROTOCOL,
                "error": f"unsupported protocol {request.get('protocol')!r}; this adapter speaks protocol {PROTOCOL}",
            }
        if self.load_error is None:
            self.load_error = self.probe()
        if self.load_error is not None:
            return {"ok": False, "error": self.load_error}
        cap = request.get("max_reply_bytes")
        self.max_reply = cap if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0 else None
        sdk, runtime = runtime_names()
        return {"ok": True, "protocol": PROTOCOL, "handler": self.spec, "sdk": sdk, "runtime": runtime}

    def reset(self, request):
        if self.load_error is not None:
            return {"ok": False, "error": self.load_error}
        base_dir = request.get("base_dir")
        if not isinstance(base_dir, str) or not base_dir:
            return {"ok": False, "error": "reset needs \"base_dir\", an absolute directory path"}
        store_dir = request.get("memories_dir")
        if not isinstance(store_dir, str) or not store_dir:
            store_dir = os.path.join(base_dir, "memories")
        self.instance = None
        try:
            self.instance, self.is_async = self.build(base_dir, store_dir)
        except BuildError as exc:
            return {"ok": False, "error": str(exc)}
        except BaseException as exc:  # noqa: B036 - report, keep serving
            return {"ok": False, "error": error_text(exc)}
        return {"ok": True}

    def apply_sets(self, base_dir, store_dir):
        """Set each --set attribute, placeholders filled; a Path where the attribute held a path."""
        import pathlib

        for module_name, attr, value in self.sets:
            module = sys.modules.get(module_name)
            if module is None:
                try:
                    module = importlib.import_module(module_name)
                except BaseException as exc:  # noqa: B036
                    raise BuildError(
                        f"--set {module_name}:{attr}: importing {module_name!r} raised {error_text(exc)}"
                    ) from None
            filled = fill_placeholders(value, base_dir, store_dir)
            if isinstance(getattr(module, attr, None), pathlib.PurePath):
                filled = pathlib.Path(filled)
            setattr(module, attr, filled)

    def constructor_kwargs(self, base_dir, store_dir):
        """The constructor's keyword arguments for one build: placeholders filled, base_path= unless used."""
        if not self.placeholders:
            return {**self.init_kwargs, "base_path": base_dir}
        import pathlib

        try:
            params = inspect.signature(self.cls).parameters
        except (TypeError, ValueError):
            params = {}
        kwargs = {}
        for name, value in self.init_kwargs.items():
            filled = fill_placeholders(value, base_dir, store_dir)
            if isinstance(value, str) and value in PLACEHOLDERS and _path_annotated(params.get(name)):
                filled = pathlib.Path(filled)
            kwargs[name] = filled
        return kwargs

    def build(self, base_dir, store_dir=None):
        """A fresh handler over BASE_DIR (its store STORE_DIR) and whether it is async; a factory's result
        is checked."""
        if store_dir is None:
            store_dir = os.path.join(base_dir, "memories")
        self.apply_sets(base_dir, store_dir)
        if self.factory:
            from anthropic.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool

            made = self._run_async(self._factory(base_dir, store_dir))
            if isinstance(made, BetaAbstractMemoryTool):
                return made, False
            if isinstance(made, BetaAsyncAbstractMemoryTool):
                return made, True
            raise BuildError(
                f"the factory {self.spec!r} returned {type(made).__name__}, not a BetaAbstractMemoryTool "
                "or BetaAsyncAbstractMemoryTool instance"
            )
        kwargs = self.constructor_kwargs(base_dir, store_dir)
        if self.is_async:
            return self._run_async(self._construct(kwargs)), True
        return self.cls(**kwargs), False

    async def _factory(self, base_dir, store_dir):
        # Called inside the loop so an async factory (or one that makes asyncio objects) works.
        made = self.cls(base_dir, **fill_placeholders(self.init_kwargs, base_dir, store_dir))
        if inspect.isawaitable(made):
            made = await made
        return made

    def probe(self):
        """Build the handler once over a throw-away directory, so that one that cannot be built at all ends
        the run at `hello` (memcert exit 2) with a message that says which form to use."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="memcert-probe-") as base_dir:
            os.makedirs(os.path.join(base_dir, "memories"), exist_ok=True)
            try:
                self.build(base_dir)
            except BuildError as exc:
                return f"Cannot use handler {self.spec!r}: {exc}; {ACCEPTED_FORMS}."
            except BaseException as exc:  # noqa: B036
                return f"Cannot build handler {self.spec!r}: {error_text(exc)}; {ACCEPTED_FORMS}."
        return None

    async def _construct(self, kwargs):
        # Built inside the loop so a constructor may create asyncio objects bound to it.
        return self.cls(**kwargs)

    def call(self, request):
        call_id = request.get("id")
        if not isinstance(call_id, str):
            return {"id": call_id, "ok": False, "error": "call needs \"id\", a string"}
        if self.load_error is not None:
            return {"id": call_id, "ok": False, "error": self.load_error}
        if self.instance is None:
            return {"id": call_id, "ok": False, "error": "no handler instance: the last reset failed or none was sent"}
        tool_input = request.get("input")

        # As BaseSyncToolRunner._run_tool / BaseAsyncToolRunner._run_tool: rendering a success is inside the try,
        # and a ToolError and any other Exception both go through tool_error_content. Unlike the runner, a
        # BaseException (KeyboardInterrupt, SystemExit, CancelledError) is reported too instead of ending the run.
        try:
            if self.is_async:
                result = self._run_async(self._acall(tool_input))
            else:
                result = self.instance.call(tool_input)
            answer = {"id": call_id, "content": self.result_content(result), "is_error": False}
        except BaseException as exc:  # noqa: B036
            failure = exc
            try:
                answer = {"id": call_id, "content": self.error_content(failure), "is_error": True}
            except BaseException as exc:  # noqa: B036 - e.g. a ToolError whose content is not iterable
                return {
                    "id": call_id,
                    "ok": False,
                    "error": f"the handler raised {error_text(failure)}, which the SDK cannot render: "
                    + error_text(exc),
                }
        problem = content_problem(answer["content"])
        if problem is not None:
            return {"id": call_id, "ok": False, "error": f"the handler's result is not tool_result content: {problem}"}
        return answer

    async def _acall(self, tool_input):
        return await self.instance.call(tool_input)

    def _run_async(self, coroutine):
        if self.loop is None or self.loop.is_closed():
            self.loop = asyncio.new_event_loop()
        return self.loop.run_until_complete(coroutine)


def parse_args(argv):
    parser = argparse.ArgumentParser(description="memcert stdio protocol v1 adapter for Python memory handlers")
    parser.add_argument(
        "--handler", required=True, metavar="SPEC", help="path/to/file.py:ClassName or package.module:ClassName"
    )
    parser.add_argument(
        "--init", metavar="JSON", help="JSON object of constructor keyword arguments ({base}, {store} placeholders)"
    )
    parser.add_argument(
        "--set",
        metavar="MODULE:ATTR=VALUE",
        action="append",
        default=[],
        help="set a module-level attribute before each build ({base}, {store} placeholders); repeatable",
    )
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    inp, out = take_protocol_channel()
    sys.dont_write_bytecode = True  # leave no __pycache__ beside the handler's files

    cls, is_async, init_kwargs, load_error, sets = None, False, {}, None, []
    try:
        if args.init is not None:
            try:
                init_kwargs = json.loads(args.init)
            except ValueError as exc:
                raise LoadError(f"Cannot use handler {args.handler!r}: --init is not valid JSON ({exc}).") from None
            if not isinstance(init_kwargs, dict):
                raise LoadError(f"Cannot use handler {args.handler!r}: --init must be a JSON object of keyword args.")
            if "base_path" in init_kwargs and not uses_placeholders(init_kwargs):
                raise LoadError(
                    f"Cannot use handler {args.handler!r}: --init must not set base_path, reset gives it "
                    "(or write it with a placeholder: {\"base_path\": \"{base}\"})."
                )
        sets = [parse_set(entry) for entry in args.set]
        cls, is_async = load_handler_class(args.handler, uses_placeholders(init_kwargs) or bool(sets))
    except LoadError as exc:
        load_error = str(exc)
    encode_line = load_encoder()  # after loading: the handler's directory may be what makes the SDK importable
    adapter = Adapter(args.handler, cls, is_async, init_kwargs, load_error, sets)

    while True:
        raw = inp.readline()
        if not raw:
            break
        if not raw.strip():
            continue
        try:
            request = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            answer, done = {"ok": False, "error": f"request is not valid UTF-8: {exc}"}, False
        except ValueError as exc:
            answer, done = {"ok": False, "error": f"request is not valid JSON: {exc}"}, False
        else:
            answer, done = adapter.answer(request)
        try:
            line = encode_line_within(encode_line, answer, adapter.max_reply)
        except Exception as exc:  # content the SDK could not have sent either (not JSON-encodable)
            line = encode_line(
                {
                    "id": answer.get("id"),
                    "ok": False,
                    "error": f"the handler's result cannot be encoded as JSON: {error_text(exc)}",
                }
            )
        out.write(line)
        out.flush()
        if done:
            break

    sys.stderr.flush()
    out.flush()
    # Skip interpreter teardown: a handler's worker threads must not keep the process alive.
    os._exit(0)


if __name__ == "__main__":
    main()
