"""A user's model file for a lane on another machine: sent as bytes over the lane's own SSH channel, never named
by a path there.

The app sends a saved model (`.keras`) or a model factory (`.py`) before the first message that needs it, in
chunks of CHUNK_BYTES (base64 in JSON lines, as every message is), at most MAX_SENT_BYTES in all. The remote
worker keeps it in its own data folder under its SHA-256 (`models/<sha256>.keras`), checks the hash once the last
chunk has come, and hands its lane the message with that path in place of the app's: the lane loads (or imports)
its own copy, as a local lane loads the user's file. A factory's file is sent alone: modules it imports from its
own folder are not sent, and must be installed there.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import os
from pathlib import Path
from typing import Iterator, TypeVar

from ...config import ConfigError, FactoryModel, RunConfig
from ...files.inputs import file_sha256
from ...messages import AnatomyJob, InspectJob, ModelChunk, RunJob, SwitchModel, Wirable

# 45 KiB a chunk: 61,440 characters of base64, within the wire guard's text bound (guard.MAX_TEXT, 64 Ki); a 4 MiB
# chunk was refused by the remote's guard, so every saved model over about 48 KB failed on a remote lane.
CHUNK_BYTES = 45 << 10
MAX_SENT_BYTES = 256 << 20  # sent over SSH before a run; a bigger model is better copied there by hand

_Message = TypeVar("_Message", bound=Wirable)


@dataclasses.dataclass(frozen=True)
class ModelFile:
    """A user's file as the app knows it: where it is here, its hash and size, and its kind's suffix."""

    path: str
    sha256: str
    size_bytes: int
    suffix: str  # ".keras" or ".py"


def _of_config(config: RunConfig) -> ModelFile | None:
    model = config.model
    if model.saved is not None:
        return ModelFile(model.saved.path, model.saved.sha256, model.saved.size_bytes, ".keras")
    if model.factory is not None:
        return ModelFile(model.factory.path, model.factory.sha256, model.factory.size_bytes, ".py")
    return None


def model_file(message: Wirable) -> ModelFile | None:
    """The user's model file a message to a lane needs, if any: a job's or a switch's config, an inspection's file."""
    if isinstance(message, (RunJob, AnatomyJob, SwitchModel)):
        return _of_config(message.config)
    if isinstance(message, InspectJob):
        if message.factory is not None:
            return ModelFile(message.factory.path, message.factory.sha256, message.factory.size_bytes, ".py")
        return ModelFile(message.path, message.sha256, message.size_bytes, ".keras")
    return None


def sending_problem(size_bytes: int, name: str, host: str) -> str:
    """Why a model file cannot be sent to `host` (a sentence), or "" when it can."""
    if size_bytes > MAX_SENT_BYTES:
        return (f"{name} is {size_bytes / 2**20:,.0f} MiB: Crossover sends a model file of at most "
                f"{MAX_SENT_BYTES >> 20} MiB to a lane on another machine ({host}); copy it there and run Crossover "
                "on that machine, or choose lanes of this one")
    return ""


def chunks(found: ModelFile) -> Iterator[ModelChunk]:
    """The file's bytes as ModelChunk messages; ConfigError when it is too big or is no longer the file checked."""
    problem = sending_problem(found.size_bytes, Path(found.path).name, "the remote")
    if problem:
        raise ConfigError(problem)
    try:
        with open(found.path, "rb") as fh:
            data = fh.read(MAX_SENT_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{found.path} cannot be read to send it: {exc.strerror or exc}") from None
    if len(data) > MAX_SENT_BYTES or hashlib.sha256(data).hexdigest() != found.sha256:
        raise ConfigError(f"{Path(found.path).name} changed since it was checked (its SHA-256 differs): run again")
    total = max(1, -(-len(data) // CHUNK_BYTES))
    for i in range(total):
        part = data[i * CHUNK_BYTES:(i + 1) * CHUNK_BYTES]
        yield ModelChunk(found.sha256, found.suffix, i, total, base64.b64encode(part).decode("ascii"))


class ModelStore:
    """The remote end's copies of the model files the app sent, by SHA-256, in `folder` (its data folder's models/)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._parts: dict[str, int] = {}  # sha256 → chunks received so far
        self.error = ""  # the last file that could not be kept, as a sentence

    def path_of(self, sha256: str, suffix: str) -> Path:
        return self.folder / f"{sha256}{suffix}"

    def take(self, chunk: ModelChunk) -> None:
        """One chunk, in order; the last checks the hash and makes the file. A broken transfer leaves no file."""
        if len(chunk.sha256) != 64 or any(c not in "0123456789abcdef" for c in chunk.sha256) \
                or chunk.suffix not in (".keras", ".py"):
            self.error = "a model file chunk with a malformed name was refused"
            return
        final, part = self.path_of(chunk.sha256, chunk.suffix), self.folder / f"{chunk.sha256}.part"
        try:
            if not 0 < chunk.total <= -(-MAX_SENT_BYTES // CHUNK_BYTES):
                raise ValueError(f"it declares {chunk.total:,} chunks: a model file sent here is at most "
                                 f"{MAX_SENT_BYTES >> 20} MiB")
            if chunk.index == 0:
                self.folder.mkdir(parents=True, exist_ok=True)
                part.unlink(missing_ok=True)
                self._parts[chunk.sha256] = 0
            if self._parts.get(chunk.sha256) != chunk.index:
                raise ValueError(f"chunk {chunk.index} of {chunk.total} came out of order")
            data = base64.b64decode(chunk.data, validate=True)
            if len(data) > CHUNK_BYTES:
                raise ValueError(f"a chunk of {len(data):,} bytes is more than the {CHUNK_BYTES:,} sent at once")
            # Never through a link planted at the part's name mid-transfer: the first chunk makes the file anew
            # (O_EXCL), the others append to that file only (O_NOFOLLOW).
            flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | (os.O_CREAT | os.O_EXCL if chunk.index == 0 else 0)
            with os.fdopen(os.open(part, flags, 0o600), "ab") as fh:
                fh.write(data)
            self._parts[chunk.sha256] = chunk.index + 1
            if chunk.index + 1 < chunk.total:
                return
            if file_sha256(part) != chunk.sha256:
                raise ValueError("its SHA-256 differs from the one the app sent")
            os.replace(part, final)
            self._parts.pop(chunk.sha256, None)
        except (OSError, ValueError) as exc:
            self.error = f"the model file {chunk.sha256[:12]}… could not be kept here: {exc}"
            self._parts.pop(chunk.sha256, None)
            part.unlink(missing_ok=True)

    def localized(self, message: _Message) -> _Message:
        """`message` with the app's path of its model file replaced by this machine's copy (where one was kept)."""
        found = model_file(message)
        if found is None:
            return message
        here = self.path_of(found.sha256, found.suffix)
        if not here.is_file():
            return message  # the lane's own sentence follows: the file cannot be read there
        path = str(here)
        if isinstance(message, InspectJob):
            factory = dataclasses.replace(message.factory, path=path) if message.factory is not None else None
            return dataclasses.replace(message, path=path, factory=factory)  # type: ignore[return-value]
        assert isinstance(message, (RunJob, AnatomyJob, SwitchModel))
        return dataclasses.replace(message, config=_config_at(message.config, path))  # type: ignore[return-value]


def _config_at(config: RunConfig, path: str) -> RunConfig:
    model = config.model
    if model.saved is not None:
        model = dataclasses.replace(model, saved=dataclasses.replace(model.saved, path=path))
    elif model.factory is not None:
        factory: FactoryModel = model.factory
        built = tuple(dataclasses.replace(b, model=dataclasses.replace(b.model, path=path)) for b in factory.built)
        model = dataclasses.replace(model, factory=dataclasses.replace(factory, path=path, built=built))
    return dataclasses.replace(config, model=model)
