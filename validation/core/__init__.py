"""The shared core of every study; it imports no study.

settings (flags and their checks), cli (the one command-line runner), results (the JSON layout, provenance,
atomic output), checks (three-valued verdicts), stats (bootstraps and rate fits), runtime (threads, memory, the
clock), workers (process pools and Dask), plots (error curves), one_pass (one pass over the weight process:
every depth and both references) and pair_study (what every study of one pair shares).
"""
