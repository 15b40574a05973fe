"""A model too big for this machine's memory on its CPU lanes: the window asks before it starts one, and says why
when the answer is no (issue 20: estimate a model's training memory before it starts, and ask in the window)."""
from __future__ import annotations

from crossover_lab.core.engine import devices


def test_a_model_too_big_for_the_memory_is_asked_about_before_it_starts(make_window, monkeypatch):
    window = make_window()
    monkeypatch.setattr(devices, "available_bytes", lambda: 1 << 20)  # 1 MiB free: the default model needs more
    asked, started = [], []
    window.desk.ask = lambda text: asked.append(text) or False
    monkeypatch.setattr(window.controller, "start_run", lambda *args, **kwargs: started.append(args))
    assert window.desk.start_run() is None and started == []
    assert "needs at least" in asked[0] and "GiB is free" in asked[0] and "Start anyway?" in asked[0]
    assert window.status.message().startswith("Not started: model 784-128-10 needs at least")
    window.desk.ask = lambda text: True  # yes: it starts, as asked
    window.desk.start_run()
    assert len(started) == 1
    monkeypatch.setattr(devices, "available_bytes", lambda: 1 << 40)
    asked.clear()
    window.desk.ask = lambda text: asked.append(text) or False
    window.desk.start_run()
    assert asked == [] and len(started) == 2  # it fits: nothing to ask
