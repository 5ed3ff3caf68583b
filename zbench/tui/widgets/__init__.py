"""Reusable dashboard widgets; each renders an immutable snapshot it is handed."""
