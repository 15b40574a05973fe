"""What leaves Crossover to be cited or followed: the decision rule (JSON), the self-contained report (HTML, Markdown)."""
