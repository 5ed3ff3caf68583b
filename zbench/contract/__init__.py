"""The runner contract, standard library only and importable by anyone: run options and the
workload table (``config``), preset resolution (``resolve``), events (``protocol``, typed in
``events``) and measurement rules (``measure``)."""
