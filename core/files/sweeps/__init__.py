"""A sweep's files: its CSV row's type (rows), reading, exporting and autosaving one (files), several at once (sets)."""
