"""The lanes panel: the lanes of this machine and of any host added (or why not), which run, their prices, the schedule."""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel,
                               QVBoxLayout, QWidget)

from ...core.machine import LABEL, short_device_name, usable_cores
from ...core.words.run import contention_note
from ...core.words.settings import lane_meaning
from ...core.config import ConfigError, LaneSpec, Schedule
from ...core.engine.conductor import default_schedule, schedule_named
from ...core.engine.devices import LaneOption
from ...core.engine.remote.channel import RemoteSettings
from ..theme.scheme import presenting
from ..widgets.elided_label import ElidedLabel
from ..widgets.lane_box import LaneBox
from ..widgets.signals import signals_blocked
from .lane_prices import LanePrices
from ..widgets.layouts import empty_layout
from .remote_hosts import RemoteHosts
from ..settings import AppSettings
from ...core.config import DeviceKind
from ...core.plurals import plural

AUTO = "auto"  # the schedule box's choice (and the saved setting's word) for Automatic: the one the lanes need
SCHEDULES = (  # (choice, shown as, tooltip): the box's data, and the setting saved, is the schedule's word
    (AUTO, "Automatic", "Lanes that share this machine's CPU cores take turns; a GPU lane trains beside the CPU."),
    (Schedule.INTERLEAVED.value, "Take turns (interleaved)", "Lanes take turns of about 2 s of training each (the first one "
     "shorter), each going on where it stopped: every figure is uncontended, and both lines grow from the start."),
    (Schedule.SIDE_BY_SIDE.value, "Side by side", "All lanes train at the same time: lanes that share CPU cores slow each "
     "other down, and their figures include that (the verdict says so)."),
    (Schedule.SEQUENTIAL.value, "One after another", "Each lane through the whole run, one at a time: exact figures."),
)


def default_selection(options: list[LaneOption]) -> list[str]:
    """CPU against the first GPU where there is one; otherwise CPU (all cores) against CPU (one thread)."""
    available = [o for o in options if o.available]

    def first(kind: str, threads: int | None = None, any_threads: bool = False) -> LaneOption | None:
        fits = [o for o in available if o.spec.kind == kind and (any_threads or o.spec.threads == threads)]
        return next((o for o in fits if o.spec.backend == "tensorflow"), fits[0] if fits else None)

    cpu = first("cpu")
    other = first("gpu", any_threads=True) or first("cpu", 1)
    names = [o.name for o in (cpu, other) if o is not None]
    return names or [o.name for o in available[:2]]


def machine_text(options: list[LaneOption] | None) -> str:
    """The status bar's summary of the machine: "2 CPU cores · GPU:0 (NVIDIA H200)"; None while looking."""
    cores = len(usable_cores())
    if options is None:
        gpus = "looking for GPUs…"
    else:
        gpus = ", ".join(o.device for o in options if o.spec.kind == DeviceKind.GPU and o.available) or "no GPU lane"
    return f"{cores} CPU {plural(cores, 'core')} · {gpus}"


TWIN_WORDS = "twin of {lane} (A/A)"
TWIN_TIP = ("{twin} is {lane} again, in a process of its own: two equal lanes taking turns. Compared or swept against "
            "{lane}, any lead the rule names between them is a false one, which is how Run > Calibrate the rule here "
            "measures this machine's false-lead rate.")


def with_twins(options: list[LaneOption]) -> list[LaneOption]:
    """This machine's lanes, each one-thread CPU lane followed by its twin (cpu1#2): a lane against itself, the
    control any user can run (issue 57)."""
    out: list[LaneOption] = []
    for option in options:
        out.append(option)
        spec = option.spec
        if spec.kind == DeviceKind.CPU and spec.threads == 1 and not spec.twin and not spec.host:
            twin = spec.twinned({spec.name})
            out.append(LaneOption(twin, TWIN_WORDS.format(lane=spec.name), option.available, option.reason))
    return out


class LanesPanel(QWidget):
    """Check boxes for the lanes (disabled ones say why in their tooltip) and the schedule."""

    selection_changed = Signal()  # the chosen lanes or the schedule changed
    remote_changed = Signal(RemoteSettings)  # a host was added or removed (its Python is in them)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._local: list[LaneOption] = []  # this machine's lanes; the hosts' follow them
        self._searching = False
        self._options: list[LaneOption] = []
        self.prices = LanePrices(self)
        self.hosts = RemoteHosts()
        self.hosts.changed.connect(self._on_hosts_changed)
        self._wanted: list[str] | None = None  # the user's (or restored) choice; None: the default
        self.boxes: dict[str, QCheckBox] = {}
        self.price_fields: dict[str, QDoubleSpinBox] = {}  # lane → its price per hour, beside its box
        self._available: set[str] = set()
        self.searching = QLabel("Looking for GPUs… (a probe per backend, a few seconds)")
        self.searching.setObjectName("hintLabel")
        self.searching.setWordWrap(True)
        self._list = QWidget()
        self._list_layout = QVBoxLayout(self._list)
        self._list_layout.setContentsMargins(0, 0, 0, 0)
        self._list_layout.setSpacing(2)
        self.schedule_box = QComboBox()
        for choice, text, tip in SCHEDULES:
            self.schedule_box.addItem(text, choice)
            self.schedule_box.setItemData(self.schedule_box.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.schedule_box.setToolTip("How the lanes share the machine while they train")
        self.schedule_box.setAccessibleName("Schedule")
        self.schedule_box.currentIndexChanged.connect(self._on_schedule_toggled)
        self.meaning = QLabel()  # what each of this machine's lane names means: cpu = all 2 cores, cpu1 = one thread
        self.meaning.setObjectName("hintLabel")
        self.meaning.setWordWrap(True)
        self.note = QLabel()
        self.note.setObjectName("warningLabel")
        self.note.setWordWrap(True)
        self.note.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.searching)
        layout.addWidget(self._list)
        layout.addWidget(self.meaning)
        layout.addWidget(QLabel("Other machines (SSH)"))
        layout.addWidget(self.hosts)
        schedule_row = QHBoxLayout()
        schedule_row.addWidget(QLabel("Schedule"))
        schedule_row.addWidget(self.schedule_box, 1)
        layout.addLayout(schedule_row)
        layout.addWidget(self.note)

    def set_options(self, options: list[LaneOption], searching: bool = False) -> None:
        """Show this machine's lanes (and the hosts'); the wanted selection applies to whichever are available."""
        self._local, self._searching = list(options), searching
        self._render()

    def _render(self) -> None:
        self._options = with_twins(self._local) + self.hosts.options()
        self.searching.setVisible(self._searching)
        empty_layout(self._list_layout)
        self.boxes, self.price_fields = {}, {}
        self._available = {o.name for o in self._options if o.available}
        section = None
        for option in self._options:
            if (option.spec.host, option.spec.backend) != section:
                section = (option.spec.host, option.spec.backend)
                where = f" on {option.spec.host}" if option.spec.host else ""
                header = ElidedLabel(LABEL[option.spec.backend] + where)  # a host's name may be long
                header.setObjectName("sectionLabel")
                self._list_layout.addWidget(header)
            # The processor's short name: a long marketing name cut the lane's own words off in a narrow panel
            # ("cpu · CPU (Intel(R) Xeon(R) Processor, 2 threads)" at presentation size); the tooltip says it whole.
            box = LaneBox(f"{option.spec.local.name}  ·  {short_device_name(option.device)}", option.spec.local.name)
            box.setEnabled(option.available)
            shown = f"{option.name}: {option.device}" if option.spec.host else option.device
            if option.spec.twin:
                shown = TWIN_TIP.format(twin=option.name, lane=option.spec.original.name)
            box.setToolTip(shown if option.available else f"Not available: {option.reason}")
            box.toggled.connect(self._on_box_toggled)
            row = QWidget()
            line = QHBoxLayout(row)
            line.setContentsMargins(0, 0, 0, 0)
            line.addWidget(box, 1)
            price = self.price_fields[option.name] = self.prices.field(option.name)
            price.setEnabled(option.available)  # a lane that cannot run has no price to enter, and looks it
            line.addWidget(price)  # parented first: shown before, it would open as a window of its own
            price.setHidden(presenting())  # a room reads the lane's name, not an empty price
            self._list_layout.addWidget(row)
            self.boxes[option.name] = box
            if not option.available and option.spec.kind == DeviceKind.GPU and option.reason:
                why = QLabel(option.reason)
                why.setObjectName("hintLabel")
                why.setWordWrap(True)
                why.setToolTip(option.reason)
                self._list_layout.addWidget(why)
        self.meaning.setText("; ".join(dict.fromkeys(lane_meaning(o.spec, len(usable_cores())) for o in self._local
                                                     if o.available)))
        self._order_tabs()
        self._apply_selection()

    def changeEvent(self, event: QEvent) -> None:
        """View > Presentation scales the application's font: the prices step aside so that a lane's name and what
        it runs on ("cpu1 · CPU (…, 1 thread)") stay whole in the panel's width."""
        if event.type() == QEvent.Type.FontChange:
            for price in self.price_fields.values():
                price.setHidden(presenting())
        super().changeEvent(event)

    def _order_tabs(self) -> None:
        """New check boxes join the end of the window's Tab order: move them before the schedule, where they show."""
        before = self.schedule_box.previousInFocusChain()
        # Qt ignores a tab order that names a widget Tab never stops at (a label): start from one it does.
        # (Qt's focus chain is a ring, never None; the stubs type a step along it as Optional.)
        while before is not None and not before.isWindow() and before.focusPolicy() == Qt.FocusPolicy.NoFocus:
            before = before.previousInFocusChain()
        start = [] if before is None or before.isWindow() else [before]
        chain: list[QWidget] = start + [*self.boxes.values(), self.schedule_box]
        for first, second in zip(chain, chain[1:]):
            QWidget.setTabOrder(first, second)

    def select(self, names: list[str]) -> None:
        """Choose these lanes (those not available yet are chosen once they are)."""
        self._wanted = list(names)
        self._apply_selection()

    def wanted_names(self) -> list[str] | None:
        """The user's choice, including lanes not available yet; None while the default applies."""
        return None if self._wanted is None else list(self._wanted)

    def pending(self) -> list[str]:
        """Wanted lanes that are not available (yet): a GPU lane before discovery has found it."""
        wanted = self._wanted or []
        return [n for n in wanted if n not in self._available]

    def reset_selection(self) -> None:
        self._wanted = None
        self._apply_selection()

    def _apply_selection(self) -> None:
        wanted = self._wanted
        if wanted is None or (wanted and not any(n in self._available for n in wanted)):
            wanted = default_selection(self._options)
        for name, box in self.boxes.items():
            with signals_blocked(box):
                box.setChecked(name in self._available and name in wanted)
        self._update_note()
        self.selection_changed.emit()

    def selected_specs(self) -> list[LaneSpec]:
        return [o.spec for o in self._options if self.boxes.get(o.name) and self.boxes[o.name].isChecked()]

    def selected_names(self) -> list[str]:
        return [s.name for s in self.selected_specs()]

    def schedule(self) -> Schedule:
        """The schedule the chosen lanes run on: the one chosen, or for Automatic the one they need."""
        choice = self.schedule_box.currentData()
        return default_schedule(self.selected_specs()) if choice == AUTO else schedule_named(choice)

    def set_schedule(self, schedule: Schedule | None) -> None:
        """Choose `schedule`, or None for Automatic."""
        choice = AUTO if schedule is None else schedule.value
        self.schedule_box.setCurrentIndex(max(0, self.schedule_box.findData(choice)))

    def remote_settings(self) -> RemoteSettings:
        return self.hosts.settings()

    def shutdown(self) -> None:
        """Stop listing a host's lanes (the window is closing)."""
        self.hosts.shutdown()

    def save_state(self, settings: AppSettings) -> None:
        settings.set_lanes(self.wanted_names())
        settings.set_text("run/schedule", self.schedule_box.currentData())
        self.prices.save_state(settings)
        self.hosts.save_state(settings)

    def restore_state(self, settings: AppSettings) -> None:
        self.prices.restore_state(settings)
        self.hosts.restore_state(settings)
        lanes = settings.lanes()
        if lanes is not None:
            self.select(lanes)
        saved = settings.text("run/schedule", AUTO)  # "auto" or a schedule's word ("concurrent", the old name, too)
        try:
            self.set_schedule(None if saved == AUTO else schedule_named(saved))
        except ConfigError:  # a settings file from another version
            self.set_schedule(None)

    def _update_note(self) -> None:
        text = contention_note(self.selected_specs(), self.schedule())
        if not text and self.schedule_box.currentData() == AUTO and len(self.selected_specs()) > 1:
            text = {Schedule.INTERLEAVED: "Automatic: these lanes share CPU cores, so they take turns of about 2 s, "
                                          "each going on where it stopped (every figure uncontended).",
                    Schedule.SIDE_BY_SIDE: "Automatic: these lanes train side by side."}[self.schedule()]
        self.note.setText(text)
        self.note.setVisible(bool(text))

    @Slot()
    def _on_box_toggled(self) -> None:
        self._wanted = self.selected_names()
        self._update_note()
        self.selection_changed.emit()

    @Slot()
    def _on_hosts_changed(self) -> None:
        self._render()
        self.remote_changed.emit(self.hosts.settings())

    @Slot()
    def _on_schedule_toggled(self) -> None:
        self._update_note()
        self.selection_changed.emit()
