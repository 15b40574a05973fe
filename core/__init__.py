"""The engine, Qt-free: the model of a run on top (config, records, messages, results, presets, paths), one subpackage per capability."""
