"""A lane on another machine: the SSH channel, what is said over it, the far end's worker, and the lanes a host offers."""
