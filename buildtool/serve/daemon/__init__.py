"""The planner daemon: a per-user background process that keeps planning answers hot.

protocol (wire format, private paths), server (the daemon), client (find/start/ask),
watch (re-plan changed models), cli (`buildtool daemon start|stop|status|clear`).
"""
