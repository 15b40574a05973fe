"""A user's model factory, `--model FILE.py:FUNCTION`, checked before any lane imports it: a regular `.py` file
within a size bound, named by its SHA-256, that defines a top-level FUNCTION taking one argument (the width).

Nothing here runs the file: it is parsed with `ast`, never imported. A lane imports it (core/lane/factory.py),
which runs the user's code, as any script would.
"""
from __future__ import annotations

import ast
import hashlib
import os

from ..config import ConfigError, FactoryModel
from .inputs import InputError, open_regular

MAX_FACTORY_BYTES = 1 << 20  # a Python file that builds a model; a bigger one is not a source file


def is_factory_arg(text: str) -> bool:
    """Whether `--model TEXT` names a model factory (FILE.py or FILE.py:FUNCTION), not a saved model."""
    path, colon, _ = text.rpartition(":")
    return text.endswith(".py") or bool(colon and path.endswith(".py"))


def split_factory_arg(text: str) -> tuple[str, str]:
    """(path, function) of `FILE.py:FUNCTION`; a ConfigError saying the form when it is not one."""
    path, colon, function = text.rpartition(":")
    if not colon or not path.endswith(".py"):
        raise ConfigError(f"--model {text}: name the function that builds the model after the file, "
                          "FILE.py:FUNCTION (e.g. my_models.py:build_cnn)")
    if not function.isidentifier():
        raise ConfigError(f"--model {text}: {function!r} is not a Python function name (FILE.py:FUNCTION)")
    return path, function


def _one_argument(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the function can be called with one positional argument, the width."""
    a = node.args
    positional = a.posonlyargs + a.args
    required = len(positional) - len(a.defaults)
    kw_required = sum(1 for d in a.kw_defaults if d is None)
    return kw_required == 0 and required <= 1 and (len(positional) >= 1 or a.vararg is not None)


def _read_source(path: str) -> tuple[bytes, int, ast.Module]:
    """The file's bytes, its size and its parse tree; a ConfigError that says why it is not a model factory's file.
    The file is read and parsed, never run."""
    name = os.path.basename(path)
    try:
        with open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_FACTORY_BYTES:
                raise ConfigError(f"{path} is {size / 2**20:.1f} MiB: more than the {MAX_FACTORY_BYTES >> 20} MiB "
                                  "a model factory's Python file may be")
            source = fh.read(MAX_FACTORY_BYTES + 1)
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(source) > MAX_FACTORY_BYTES:  # it grew while it was read
        raise ConfigError(f"{path} is more than the {MAX_FACTORY_BYTES >> 20} MiB a model factory's file may be")
    try:
        tree = ast.parse(source, filename=name)
    except SyntaxError as exc:
        raise ConfigError(f"{name} is not valid Python: {exc.msg} (line {exc.lineno})") from None
    except ValueError as exc:  # a NUL byte
        raise ConfigError(f"{name} is not a Python source file: {exc}") from None
    except (RecursionError, MemoryError):  # 300,000 terms in one expression, 50,000 nested lambdas
        raise ConfigError(f"{name} nests its code deeper than Python's parser can follow (an expression of "
                          "hundreds of thousands of terms, or thousands of nested lambdas): no model factory looks "
                          "like that; write it as a function of a few lines") from None
    return source, size, tree


def factory_functions(path: str) -> list[str]:
    """The top-level functions of the file at `path` that could be a model factory (not async, callable with one
    argument, the width), in the order the file defines them (a name defined twice: its last definition decides);
    a ConfigError that says why the file cannot be read, or none qualifies. Parsed with `ast`, never run."""
    _, _, tree = _read_source(path)
    last: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            last.pop(node.name, None)
            last[node.name] = node
    found = [name for name, node in last.items() if isinstance(node, ast.FunctionDef) and _one_argument(node)]
    if not found:
        raise ConfigError(f"{os.path.basename(path)} defines no top-level function of one argument, the width "
                          "(def build(width) returning a keras.Model)")
    return found


def check_factory(text: str) -> FactoryModel:
    """`FILE.py:FUNCTION` as a FactoryModel no lane has inspected yet (its path, hash, size and function), or a
    ConfigError that says why not. The file is read and parsed, not run."""
    path, function = split_factory_arg(text)
    name = os.path.basename(path)
    source, size, tree = _read_source(path)
    found = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
             and node.name == function]
    if not found:
        names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
        listed = f" (its functions: {', '.join(names[:8])})" if names else " (it defines no top-level function)"
        raise ConfigError(f"{name} defines no top-level function {function}{listed}")
    node = found[-1]  # the last definition is the one the module ends with
    if isinstance(node, ast.AsyncFunctionDef):
        raise ConfigError(f"{function} in {name} is async: it must return a keras.Model, {function}(width)")
    if not _one_argument(node):
        raise ConfigError(f"{function} in {name} must take one argument, the width: def {function}(width)")
    return FactoryModel(path=os.path.abspath(path), sha256=hashlib.sha256(source).hexdigest(), size_bytes=size,
                        function=function)
