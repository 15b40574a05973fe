"""The window's left column: the model, the lanes (with hosts and prices), Start and Stop."""
