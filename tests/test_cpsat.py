"""cpsat.load(): CP-SAT without paying for pandas, and pandas itself untouched."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import sys
from buildtool.plan import cpsat
cp = cpsat.load()
assert "pandas" not in sys.modules, "cp_model loaded pandas"
m = cp.CpModel()
x = m.NewIntVar(0, 10, "x")
m.Add(x >= 3)
m.Minimize(x)
s = cp.CpSolver()
assert s.Solve(m) == cp.OPTIMAL and s.Value(x) == 3
import pandas as pd  # the real pandas afterwards, also as cp_model sees it (its *_series methods)
assert hasattr(pd, "DataFrame") and cp.pd.Series is pd.Series
v = m.new_int_var_series("v", pd.Index(range(4)), 0, 5)
assert isinstance(v, pd.Series) and len(v) == 4
assert cpsat.load() is cp
print("ok")
"""


def test_cpsat_loads_without_pandas_and_pandas_still_works():
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


THREADS = r"""
import sys, threading
from buildtool.plan import cpsat
NAME = "ortools.sat.python.cp_model"
errors, done = [], threading.Event()

def first():
    cpsat.load()
    done.set()

def other():  # asks once the first thread's import of cp_model is under way (its module in sys.modules)
    while NAME not in sys.modules and not done.is_set():
        pass
    if done.is_set():
        errors.append("the import ended before another thread asked")
        return
    try:
        cp = cpsat.load()
        cp.CpModel, cp.CpSolver
    except Exception as e:
        errors.append(repr(e))

threads = [threading.Thread(target=first)] + [threading.Thread(target=other) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(errors[0] if errors else "ok")
"""


def test_cpsat_load_from_threads_waits_for_the_import():
    """SCons runs the plan and code steps of several models in its worker threads (and the daemon a request a
    thread): a thread that asked while another was importing cp_model got the half-made module from sys.modules
    ("partially initialized module ... has no attribute 'CpModel'")."""
    r = subprocess.run([sys.executable, "-c", THREADS], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
