"""Qt views. Each `Qt<Model>` lives in `qt_<model>.py` and subscribes to its model once."""
