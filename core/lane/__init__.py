"""What runs inside a lane process: backends, the model, data and feeding, the batch timer, the worker, the anatomy's timed rungs."""
