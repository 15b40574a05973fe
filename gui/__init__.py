"""Crossover's desktop window: Qt widgets and the controller that drives lanes from worker threads.

Nothing under gui/ imports a deep-learning framework: training happens in the engine's lane
processes (core/engine/lanes.py), and the window only sees their events.
"""
