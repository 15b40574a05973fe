"""The README's "A first demo" as a presenter does it, from outside the app: `main.py` on an X server of its own
(Xvfb), driven with real key presses and clicks (xdotool), read back from screenshots (ImageMagick's `import`) by
OCR (tesseract) and from the files the app writes (its autosave CSV and JSON, the report it exports).

`drive(folder, (1600, 1000))` does it once on a fresh CROSSOVER_HOME: launch, F5, hold the default width 128 until
both lanes have 10 steady batches, type 1024 into Layer 1's box, hold it likewise, let the run end by its default
time limit (30 s a lane), screenshot and OCR the headline (and in View > Presentation, F11, with `presentation`),
then File > Export report (Ctrl+Shift+E, the path typed into Qt's save dialog). No part of the app is imported: only
what a person at the screen does and sees. Shared by tests/gui/window/test_demo_xdotool_xvfb.py and
benchmarks/demo_screens.py.
"""
from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The programs the drive needs, with the apt package that has each.
TOOLS = {"Xvfb": "xvfb", "xdotool": "xdotool", "tesseract": "tesseract-ocr", "import": "imagemagick",
         "convert": "imagemagick"}
HELD_BATCHES = 10  # the README: a width held for 10 steady batches a lane is a point of the map
LANES: tuple[str, ...] = ("cpu", "cpu1")  # the defaults on a machine without a GPU: all cores against one thread
FIRST_WIDTH, TYPED_WIDTH = 128, 1024  # the default width, and the README's "from 128 to 1,024, say"


def missing_tools() -> list[str]:
    """The apt packages to install for the drive, one per missing program; [] when all are there."""
    return sorted({package for program, package in TOOLS.items() if shutil.which(program) is None})


class DemoError(AssertionError):
    """The demo did not do what a presenter sees it do (the message says what, with the app's log)."""


@dataclass(frozen=True)
class Word:
    """A word tesseract read, in screen pixels, with its block, paragraph and line."""
    text: str
    x: int
    y: int
    w: int
    h: int
    line: tuple[int, int, int]

    @property
    def centre(self) -> tuple[int, int]:
        return self.x + self.w // 2, self.y + self.h // 2


@dataclass
class Shown:
    """What one drive showed and wrote."""
    size: tuple[int, int]
    timings: dict[str, float]  # seconds: launch_to_window_s, start_to_first_lane_s, ... (see Demo)
    loads: dict[str, float]  # the 1-minute load average at launch, F5, the typed width and the run's end
    steady: dict[int, dict[str, int]]  # steady batches per width and lane, from the run's autosave
    headlines: dict[str, str]  # per screenshot ("window", "presentation"): the headline as OCR reads it
    screenshots: dict[str, Path]
    report: Path
    report_text: str  # the report's words (HTML gone)
    report_answer: str  # its answer, the first verdict of "The question and the answer"
    report_points: dict[tuple[str, int], int]  # its table of points: (lane, width) → steady batches


@dataclass
class Demo:
    """One Xvfb display of `size` with the app on it, on a fresh CROSSOVER_HOME and KERAS_HOME under `folder`.
    A context manager: on leaving, the app, its lanes and the X server are gone, whatever happened; and if the
    process driving them dies, they get SIGTERM (setpriv --pdeathsig), so a killed test leaves nothing either.
    Every wait ends by `budget_s` after entering, so a drive fails with its reason before pytest's own timeout."""

    folder: Path
    size: tuple[int, int] = (1600, 1000)
    maximise: bool = True  # as a presenter does: the window fills the screen (Xvfb has no window manager to do it)
    budget_s: float = 270
    timings: dict[str, float] = field(default_factory=dict)
    loads: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.folder = Path(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.home = self.folder / "home"
        self.display = ""
        self.window = ""
        self.pids: set[int] = set()  # every process of the drive seen: the X server, the app, its lanes
        self._server: subprocess.Popen | None = None
        self._app: subprocess.Popen | None = None
        self._log = None
        self._deadline = time.monotonic() + self.budget_s
        self._launched = self._started = self._typed = 0.0

    # ------------------------------------------------------------------ the X server and the app

    def __enter__(self) -> "Demo":
        self._deadline = time.monotonic() + self.budget_s
        try:
            for _ in range(3):
                with _XVFB_STARTING:  # one at a time: two drives at once would pick the same free display
                    self._server, self.display = _start_xvfb(self.size)
                self.pids.add(self._server.pid)
                # The display is this server's, of this size.
                if self.xdotool("getdisplaygeometry").split() == [str(self.size[0]), str(self.size[1])]:
                    return self
                _end_group(self._server, 5)
                self._server = None
            raise DemoError("Xvfb started three times without a display of its own")
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    def env(self) -> dict[str, str]:
        return {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": self.display, "CROSSOVER_HOME": str(self.home),
                "KERAS_HOME": str(self.folder / "keras"), "XDG_CONFIG_HOME": str(self.folder / "config"),
                "CROSSOVER_NO_RESTORE_PROMPT": "1",
                "PYTHONDONTWRITEBYTECODE": ""}  # compiled modules kept, as `make run` launches the window

    def launch(self, timeout: float = 60) -> None:
        """`main.py` as `make run` starts it, until its window is mapped (maximised with `maximise`). Timed from
        the launch: the first thing on the screen (the opening card the process shows while it loads, or the window)
        and the window."""
        self._log = open(self.folder / "app.log", "w")
        self.loads["launch"] = os.getloadavg()[0]
        self._launched = time.monotonic()
        self._app = _spawn([sys.executable, str(ROOT / "main.py")], cwd=ROOT, env=self.env(),
                           stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        self.pids.add(self._app.pid)

        def shown() -> str:
            if "launch_to_card_s" not in self.timings and self._find("^Crossover"):
                self.timings["launch_to_card_s"] = time.monotonic() - self._launched  # the card, or the window
            return self._find("^Crossover .")  # the window ("Crossover — …"), not the opening card ("Crossover")

        self.window = self._wait(shown, timeout, "the window never appeared", 0.05)
        self.timings["launch_to_window_s"] = time.monotonic() - self._launched
        if self.maximise:
            self.xdotool("windowmove", "--sync", self.window, "0", "0")
            self.xdotool("windowsize", "--sync", self.window, str(self.size[0]), str(self.size[1]))
        self.focus()

    def close(self) -> None:
        """The app (its lanes with it: one process group) and the X server ended; killed where they do not end
        within 20 s."""
        self._note_children()
        app, self._app = self._app, None
        if app is not None:
            _end_group(app, 20)
        server, self._server = self._server, None
        if server is not None:
            _end_group(server, 5)
        if self._log is not None:
            self._log.close()
            self._log = None

    def left_behind(self) -> list[str]:
        """The drive's processes still alive ("pid name"), after close(): [] when all are gone."""
        import psutil

        alive = []
        for pid in sorted(self.pids):
            try:
                p = psutil.Process(pid)
                if p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(f"{pid} {' '.join(p.cmdline())[:120]}")
            except psutil.NoSuchProcess:
                pass
        return alive

    def _note_children(self) -> None:
        if self._app is None:
            return
        import psutil

        try:
            self.pids |= {c.pid for c in psutil.Process(self._app.pid).children(recursive=True)}
        except psutil.NoSuchProcess:
            pass

    def log_tail(self, n: int = 3000) -> str:
        path = self.folder / "app.log"
        return path.read_text(errors="replace")[-n:] if path.exists() else ""

    def _alive(self) -> None:
        if self._app is not None and self._app.poll() is not None:
            raise DemoError(f"the app ended (exit {self._app.poll()}):\n{self.log_tail()}")

    # ------------------------------------------------------------------ input

    def xdotool(self, *args: str) -> str:
        out = subprocess.run(["xdotool", *args], env=self.env(), capture_output=True, text=True, timeout=30)
        return out.stdout

    def _find(self, name: str) -> str:
        ids = self.xdotool("search", "--onlyvisible", "--name", name).split()
        return ids[0] if ids else ""

    def focus(self, window: str = "") -> None:
        self.xdotool("windowfocus", "--sync", window or self.window)

    def key(self, *keys: str) -> None:
        """Key presses into the focused window, as `xdotool key` names them (F5, ctrl+shift+e, Return)."""
        self.xdotool("key", "--delay", "60", *keys)

    def type(self, text: str) -> None:
        self.xdotool("type", "--delay", "40", text)

    def click(self, x: int, y: int) -> None:
        self.xdotool("mousemove", "--sync", str(x), str(y), "click", "1")

    def park_mouse(self) -> None:
        """The pointer off every control, so no tooltip covers what a screenshot shows."""
        self.xdotool("mousemove", "--sync", str(self.size[0] - 1), str(self.size[1] // 2))

    # ------------------------------------------------------------------ screenshots and OCR

    def shot(self, name: str) -> Path:
        """The whole screen as `folder/name.png`."""
        path = self.folder / f"{name}.png"
        subprocess.run(["import", "-display", self.display, "-window", "root", str(path)], check=True,
                       capture_output=True, timeout=60)
        return path

    def headline(self, png: Path) -> str:
        """The headline on `png` as OCR reads it (ocr_headline)."""
        return ocr_headline(png)

    # ------------------------------------------------------------------ the demo's steps

    def start(self, timeout: float = 150) -> None:
        """F5, then each lane's first batch in the autosave (a batch drawn reaches it within a second)."""
        self.focus()
        self.loads["start"] = os.getloadavg()[0]
        self._started = pressed = time.monotonic()
        self.key("F5")
        seen: dict[str, float] = {}

        def both() -> bool:
            nonlocal pressed
            if not self._autosaves("json") and time.monotonic() - pressed > 15:
                self.focus()  # no run yet: F5 pressed before the lanes were found does nothing; press it again
                self.key("F5")
                pressed = time.monotonic()
            for row in self.rows():
                seen.setdefault(row["lane"], time.monotonic() - self._started)
            return all(lane in seen for lane in LANES)

        self._wait(both, timeout, f"no batches of both lanes {timeout:.0f} s after F5 (seen {sorted(seen)})", 0.25)
        first, second = sorted(seen[lane] for lane in LANES)
        self.timings["start_to_first_lane_s"], self.timings["start_to_both_lanes_s"] = first, second

    def hold(self, width: int, timeout: float = 120) -> float:
        """Until both lanes have HELD_BATCHES steady batches at `width`; the seconds it took."""
        began = time.monotonic()
        self._wait(lambda: min(self.steady(width).values()) >= HELD_BATCHES, timeout,
                   f"no point of both lanes at width {width} within {timeout:.0f} s (steady batches "
                   f"{self.steady(width)}; every width: {self.widths_seen()})", 0.25)
        return time.monotonic() - began

    def hidden_layers_box(self, png: Path | None = None) -> tuple[int, int]:
        """Where the Model panel's "Hidden layers" box is: the number right of those words (OCR). Layer 1's own row
        is not read for its box: its slider makes OCR misplace the number (and a click there moves the slider)."""
        png = png or self.shot("find-hidden-layers")
        words = ocr_words(png, (0, 0, min(260, self.size[0]), self.size[1]))
        for line in _lines(words):
            texts = [w.text.lower() for w in line]
            if "hidden" in texts and "layers" in texts[texts.index("hidden"):]:
                after = line[texts.index("layers") + 1:]
                number = next((w for w in after if re.fullmatch(r"[|(\[]?[1-8l][)\]|]?", w.text)), None)
                if number is not None:
                    return number.centre
        raise DemoError("no 'Hidden layers' box on the screen: " + " ".join(w.text for w in words))

    def type_width(self, width: int) -> None:
        """Into Layer 1's box as a keyboard user reaches it: a click into "Hidden layers", Tab past Layer 1's
        slider to its box (its text selected), type the width, Enter."""
        x, y = self.hidden_layers_box()
        self.focus()
        self.click(x, y)
        self.key("Tab", "Tab", "ctrl+a")
        self.type(str(width))
        self.key("Return")
        self._typed = time.monotonic()
        self.park_mouse()
        self.loads["typed"] = os.getloadavg()[0]

    def point_at(self, width: int, timeout: float = 120) -> None:
        """Until both lanes have a point at `width` (HELD_BATCHES steady batches), timed from the typed width."""
        self.hold(width, timeout)
        self.timings["typed_to_point_both_lanes_s"] = time.monotonic() - self._typed

    def wait_run_end(self, timeout: float = 240) -> None:
        """Until the run ends by itself (the default time limit: 30 s of steady batches a lane)."""
        self._wait(lambda: self.run_json().get("ended_at"), timeout, f"the run did not end within {timeout:.0f} s",
                   0.5)
        self.timings["start_to_run_end_s"] = time.monotonic() - self._started
        self.loads["run_end"] = os.getloadavg()[0]
        self._note_children()
        time.sleep(2)  # the window's last repaint of the run's end

    def presentation(self) -> None:
        """View > Presentation by its key (F11)."""
        self.focus()
        self.key("F11")
        self.park_mouse()
        time.sleep(2)

    def export_report(self, path: Path, timeout: float = 60) -> str:
        """File > Export report (Ctrl+Shift+E), the path typed into Qt's save dialog and Enter; the report's HTML."""
        path = Path(path)
        self.focus()
        self.key("ctrl+shift+e")
        dialog = self._wait(lambda: self._find("Export report"), 30, "no Export report dialog after Ctrl+Shift+E")
        self.focus(dialog)
        time.sleep(0.5)
        self.key("ctrl+a")
        self.type(str(path))
        self.key("Return")
        self._wait(lambda: path.exists() and path.stat().st_size > 0 and not self._find("Export report"), timeout,
                   f"no report at {path} within {timeout:.0f} s")
        time.sleep(0.5)  # written atomically: complete once there
        return path.read_text(encoding="utf-8")

    # ------------------------------------------------------------------ what the app wrote

    def _autosaves(self, suffix: str) -> list[Path]:
        return sorted((self.home / "autosave").glob(f"*.{suffix}"))

    def run_json(self) -> dict:
        """The live run's autosave sidecar (its `ended_at` is set once the run ends)."""
        files = self._autosaves("json")
        try:
            runs = json.loads(files[-1].read_text()).get("runs", []) if files else []
        except (OSError, ValueError):  # replaced while read
            return {}
        return runs[-1] if runs else {}

    def rows(self) -> list[dict[str, str]]:
        """The live run's per-batch rows so far (its autosave CSV)."""
        files = self._autosaves("csv")
        try:
            with open(files[-1], newline="") as f:
                return list(csv.DictReader(f))
        except (OSError, IndexError):
            return []

    def steady(self, width: int) -> dict[str, int]:
        """Steady (not warm-up) batches per lane at the one hidden layer `width`."""
        counts: dict[str, int] = dict.fromkeys(LANES, 0)
        for row in self.rows():
            if row.get("lane") in counts and row.get("widths") == str(width) and row.get("warmup") == "0":
                counts[row["lane"]] += 1
        return counts

    def widths_seen(self) -> dict[str, list[str]]:
        """Every model (widths joined by "-") each lane trained so far."""
        seen: dict[str, list[str]] = {}
        for row in self.rows():
            models = seen.setdefault(row.get("lane", "?"), [])
            if row.get("widths") not in models:
                models.append(row.get("widths", "?"))
        return seen

    # ------------------------------------------------------------------

    def _wait(self, found, timeout: float, failure: str, interval: float = 0.1):
        deadline = min(time.monotonic() + timeout, self._deadline)
        while True:
            self._alive()
            value = found()
            if value:
                return value
            if time.monotonic() >= deadline:
                break
            time.sleep(interval)
        over = " (the drive's whole budget spent)" if deadline == self._deadline else ""
        raise DemoError(f"{failure}{over}\n--- the app's log:\n{self.log_tail()}")


def drive(folder: Path, size: tuple[int, int], presentation: bool = False, budget_s: float = 270) -> Shown:
    """The README's first demo once, under `folder` (its screenshots, the report, the app's home and log there)."""
    folder = Path(folder)
    name = f"{size[0]}x{size[1]}"
    with Demo(folder, size, budget_s=budget_s) as demo:
        demo.launch()
        demo.start()
        demo.hold(FIRST_WIDTH)
        demo.type_width(TYPED_WIDTH)
        demo.point_at(TYPED_WIDTH)
        demo.wait_run_end()
        steady = {w: demo.steady(w) for w in (FIRST_WIDTH, TYPED_WIDTH)}
        shots = {"window": demo.shot(f"window-{name}")}
        headlines = {"window": demo.headline(shots["window"])}
        report = folder / "demo-report.html"
        page = demo.export_report(report)
        if presentation:
            demo.presentation()
            shots["presentation"] = demo.shot(f"presentation-{name}")
            headlines["presentation"] = demo.headline(shots["presentation"])
    left = demo.left_behind()
    if left:
        raise DemoError(f"left behind after the drive: {left}")
    return Shown(size, demo.timings, demo.loads, steady, headlines, shots, report, page_text(page),
                 report_answer(page), report_points(page))


# ---------------------------------------------------------------------- processes


_XVFB_STARTING = threading.Lock()


def _start_xvfb(size: tuple[int, int]) -> tuple[subprocess.Popen, str]:
    """An X server of `size` on a display no other has (no socket, no lock file), once it takes clients. It never
    resets (-noreset): by default it does when its last client leaves, and the app, connecting while an xdotool
    search had just left, could not ("could not connect to display")."""
    for n in range(320, 420):
        if os.path.exists(f"/tmp/.X11-unix/X{n}") or os.path.exists(f"/tmp/.X{n}-lock"):
            continue
        server = _spawn(["Xvfb", f":{n}", "-screen", "0", f"{size[0]}x{size[1]}x24", "-nolisten", "tcp",
                         "-noreset"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while server.poll() is None and time.monotonic() < deadline and not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            time.sleep(0.05)
        if server.poll() is None and os.path.exists(f"/tmp/.X11-unix/X{n}"):
            return server, f":{n}"
        _end_group(server, 5)  # another server took the display meanwhile: the next one
    raise DemoError("no free X display from :320 to :419")


def _spawn(args: list[str], **kwargs) -> subprocess.Popen:
    """A process group of its own (its children go with it), sent SIGTERM if the thread that started it ends
    first (a test killed by pytest-timeout): setpriv's --pdeathsig, where util-linux has it."""
    prefix = ["setpriv", "--pdeathsig", "TERM"] if shutil.which("setpriv") else []
    return subprocess.Popen(prefix + args, start_new_session=True, **kwargs)


def _end_group(process: subprocess.Popen, grace: float) -> None:
    """SIGTERM to the process's group, SIGKILL to what is left of it after `grace` s."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _group_alive(process.pid):
        process.poll()  # reaps the leader, so its group can be seen empty
        time.sleep(0.1)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(10)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


# ---------------------------------------------------------------------- OCR


def ocr_words(png: Path, crop: tuple[int, int, int, int] | None = None, scale: int = 2) -> list[Word]:
    """What tesseract reads on `png` (within `crop`: x, y, width, height), each word in screen pixels. The
    window's 9-13 px text is read at `scale` times its size: far fewer misread words."""
    big = png.with_name(png.stem + "-ocr.png")
    geometry = ["-crop", "{2}x{3}+{0}+{1}".format(*crop), "+repage"] if crop else []
    try:
        subprocess.run(["convert", str(png), *geometry, "-resize", f"{scale * 100}%", str(big)], check=True,
                       capture_output=True, timeout=60)
        out = subprocess.run(["tesseract", str(big), "-", "--psm", "3", "tsv"], capture_output=True, text=True,
                             timeout=120, env={**os.environ, "OMP_THREAD_LIMIT": "1"})
    finally:
        big.unlink(missing_ok=True)
    ox, oy = (crop[0], crop[1]) if crop else (0, 0)
    found = []
    for row in out.stdout.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or not cells[11].strip():
            continue
        block, par, line, _, x, y, w, h = (int(c) for c in cells[2:10])
        found.append(Word(cells[11].strip(), ox + x // scale, oy + y // scale, w // scale, h // scale,
                          (block, par, line)))
    return found


def _lines(words: list[Word]) -> list[list[Word]]:
    lines: dict[tuple[int, int, int], list[Word]] = {}
    for w in words:
        lines.setdefault(w.line, []).append(w)
    return [sorted(line, key=lambda w: w.x) for line in lines.values()]


def _height(words: list[Word]) -> int:
    return sorted(w.h for w in words)[len(words) // 2]


def _segments(words: list[Word]) -> list[list[Word]]:
    """OCR's lines cut where a gap wider than two letters' height parts them: a line of the Summary and the line
    of the History beside it, read as one, are two again."""
    out = []
    for line in _lines(words):
        gap = 2 * _height(line)
        seg = [line[0]]
        for prev, w in zip(line, line[1:]):
            if w.x - (prev.x + prev.w) > gap:
                out.append(seg)
                seg = []
            seg.append(w)
        out.append(seg)
    return out


def _scroll_arrow(word: Word) -> bool:
    """The Summary's scroll bar arrow beside a line's last word, as OCR reads it ("~", "[a", "^"): a token of at
    most two characters that is not a word or a number."""
    return len(word.text) <= 2 and bool(re.search(r"[\[\]~^|<>]", word.text))


def ocr_headline(png: Path) -> str:
    """The Summary's headline as OCR reads it: the tallest of the runs of words that state an answer (a lane
    faster, no answer, too close), with the lines below it that its sentence wraps onto (as tall, as far left). A
    line's last token that is the scroll bar's arrow (the headline wraps beside it) is left out."""
    segments = [s[:-1] if len(s) > 1 and _scroll_arrow(s[-1]) else s for s in _segments(ocr_words(png))]
    said = [s for s in segments if ANSWER.search(" ".join(w.text for w in s))]
    if not said:
        return ""
    best = max(said, key=_height)
    h, text, last = _height(best), " ".join(w.text for w in best), best
    for _ in range(2):
        below = [s for s in segments if abs(s[0].x - best[0].x) <= 2 * h and 0 < s[0].y - last[0].y <= 2.2 * h
                 and abs(_height(s) - h) <= 0.3 * h]
        if not below:
            break
        last = min(below, key=lambda s: s[0].y)
        text += " " + " ".join(w.text for w in last)
    return text


# ---------------------------------------------------------------------- what the window and the report say

ANSWER = re.compile(r"faster|slower|no\s*answer|too\s*close", re.I)  # OCR may run two words together


def page_text(page: str) -> str:
    """An HTML page's words: scripts and styles gone, tags gone, entities decoded, spaces collapsed."""
    page = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page))).strip()


def report_answer(page: str) -> str:
    """The report's answer: the first verdict of its section "The question and the answer"."""
    section = re.search(r'(?is)<section id="answer">(.*?)</section>', page)
    verdict = re.search(r'(?is)<p class="verdict">(.*?)</p>', section.group(1)) if section else None
    return page_text(verdict.group(1)) if verdict else ""


def report_points(page: str) -> dict[tuple[str, int], int]:
    """The report's measured points: (lane, width) → steady batches, from its table of lanes and widths."""
    table = re.search(r"(?is)<th>width \(units\)</th>.*?</table>", page)
    points = {}
    for row in re.findall(r"(?is)<tr>(.*?)</tr>", table.group(0) if table else ""):
        cells = [page_text(c) for c in re.findall(r"(?is)<td[^>]*>(.*?)</td>", row)]
        if len(cells) >= 6 and cells[1].replace(",", "").isdigit():
            points[(cells[0], int(cells[1].replace(",", "")))] = int(cells[5].replace(",", "") or 0)
    return points


def _ocr_fixed(text: str) -> str:
    t = re.sub(r"\bcpu[l|I!\]]", "cpu1", text, flags=re.I)  # OCR reads "cpu1" as "cpul", "cpu|" or "cpu]"
    return re.sub(r"(?<=\d)[,.](?=\d{3}\b)", "", t)  # "1,024" (and OCR's "1.024") → 1024


def main_clause(text: str) -> str:
    """The answer's own words, without what OCR read around it or the brackets of what it rests on: from the lane
    that leads it (or "no answer", "too close") to the full stop, every bracket taken out."""
    t = _ocr_fixed(text)
    while re.search(r"\([^()]*\)", t):
        t = re.sub(r"\s*\([^()]*\)", "", t)
    m = ANSWER.search(t)
    if not m:
        return ""
    start = m.start()
    if not m.group(0).lower().startswith("no"):
        lanes = [x.start() for x in re.finditer(r"\b[\w:]*cpu1?\b", t[:m.start()])]
        start = lanes[0] if lanes else m.start()
        for x in reversed(lanes):  # the subject: the first lane after the last break before the verb
            if not re.search(r"[.:;|\]]\s", t[x:m.start()]):
                start = x
    end = re.search(r"\s[(\[|]|\.(\s|$)", t[m.end():])  # a full stop, or OCR's reading of the next column
    return t[start:m.end() + (end.start() if end else len(t) - m.end())].strip()


def key_words(text: str) -> dict[str, object]:
    """What a reader takes from an answer, robust to OCR: the lanes in the order named (the faster one first),
    what it says (faster, no answer, too close) and the widths (whole numbers of two digits or more, not a
    ratio such as 1.3x nor a percentage)."""
    t = main_clause(text).lower()
    lanes: list[str] = []
    for lane in re.findall(r"\b[\w:]*cpu1?\b", t):
        if lane not in lanes:
            lanes.append(lane)
    says = sorted({re.sub(r"\s*(answer|close)", r" \1", m.group(0)) for m in ANSWER.finditer(t)})
    return {"lanes": lanes, "says": says, "widths": widths_named(t)}


def widths_named(text: str) -> list[int]:
    """The widths a sentence names: whole numbers of two digits or more ("1,024" is 1024), not a ratio (1.3x), a
    percentage, a count of widths ("2 widths"), a size in FLOPs ("126 MFLOP") nor a date (2026-12-07)."""
    t = re.sub(r"\d{4}-\d{2}-\d{2}", " ", _ocr_fixed(text).lower())
    t = re.sub(r"[\d.]+\s*([kmgt]?flop|widths|ms\b|s\b)", " ", t)
    return sorted({int(n) for n in re.findall(r"(?<![\d±])(?<!\d[.,])(\d{2,5})(?![\d%x]|[.,]\d)", t)})
