"""The only package that imports PySide6 (with ``app.py``)."""
