"""The engine, Qt-free: the model of a run on top (config, records, run_stats, messages, results), one subpackage per capability."""

APP_VERSION = "0.1.0"  # the app's version, as the wheel's metadata and a remote lane's handshake state it
